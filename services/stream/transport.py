"""The worker's Kafka transport: Faust's aiokafka driver with a fetch that waits 100 ms.

Faust (0.15) makes its consumer with ``fetch_max_wait_ms=1500`` and no setting to change
it: the broker holds a fetch that finds no new data for up to 1.5 s. aiokafka keeps one
fetch in flight per broker, and a fetch asks only for the partitions whose records it has
handed on. So when the worker has buffered posts.raw (a backlog) and the request went out
for the posts.raw partitions alone, the posts.tagged records that ``tag_posts`` writes
meanwhile wait for that request to time out before ``index_posts`` sees them: measured in
docs/benchmarks.md, indexing lagged 1.3-1.6 s behind tagging at the end of an 8,000-post
backlog, 0.5-0.7 s with 100 ms. An idle worker pays for it with a fetch every 100 ms.

``SCHEME`` names this transport in the broker URL (``kafka-nlp://host:port``); it is the
same driver as Faust's ``kafka://`` in every other respect.
"""

from __future__ import annotations

import aiokafka
from faust.transport.drivers import TRANSPORTS
from faust.transport.drivers import aiokafka as faust_aiokafka

FETCH_MAX_WAIT_MS = 100
SCHEME = "kafka-nlp"


class ConsumerThread(faust_aiokafka.AIOKafkaConsumerThread):
    def _create_worker_consumer(self, transport: faust_aiokafka.Transport
                                ) -> aiokafka.AIOKafkaConsumer:
        consumer = super()._create_worker_consumer(transport)
        # read when the consumer starts and makes its fetcher (aiokafka 0.14)
        consumer._fetch_max_wait_ms = FETCH_MAX_WAIT_MS
        return consumer


class Consumer(faust_aiokafka.Consumer):
    def _new_consumer_thread(self) -> ConsumerThread:
        return ConsumerThread(self, loop=self.loop, beacon=self.beacon)


class Transport(faust_aiokafka.Transport):
    Consumer = Consumer


TRANSPORTS.aliases[SCHEME] = f"{__name__}:Transport"
