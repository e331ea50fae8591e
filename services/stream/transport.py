"""The worker's Kafka transport: Faust's aiokafka driver with a fetch that waits 100 ms.

Faust (0.15) makes its consumer with ``fetch_max_wait_ms=1500`` and no setting to change
it: the broker holds a fetch that finds no new data for up to 1.5 s. aiokafka keeps one
fetch in flight per broker, and a fetch asks only for the partitions whose records it has
handed on. So when the worker has buffered posts.raw (a backlog) and the request went out
for the posts.raw partitions alone, the posts.tagged records that ``tag_posts`` writes
meanwhile wait for that request to time out before ``index_posts`` sees them: measured in
docs/benchmarks.md, indexing lagged 1.3-1.6 s behind tagging at the end of an 8,000-post
backlog, 0.5-0.7 s with 100 ms. An idle worker pays for it with a fetch every 100 ms.

Acks across a rebalance. After every rebalance Faust seeks each assigned partition back
to its committed offset and reads on from there, so whatever was fetched before is read
again. Faust still records acks of the messages fetched before: the ones its streams skip
(fetched in an older generation, or delivered while the flow is suspended) are acked
unprocessed, and acks recorded between the revocation and the seek survive it. Faust
commits the first run of acked offsets that starts at most one past the committed offset
(``Consumer._new_offset``), so an ack of a skipped message can commit past a post nobody
processed, and a second rebalance before the post is read again loses it. That is the one
path to a loss we found in Faust's code after a Compose run lost one post of 2,574 to a
worker kill (the test now reports where missing posts went); in local runs of ``python -m
bench faults --only rejoin`` the stale acks seen were of processed messages, acked after
the rebalance (over 1,000 per run), never of skipped ones. Here an ack counts only for a
message fetched in the current generation while the flow runs (not between a revocation
and the seek that ends the rebalance), and each seek to the committed offsets forgets the
acks recorded before it: every recorded ack is of a message read after the seek, acked in
offset order (``delivery.InOrder``). A message fetched before a rebalance is processed
again by its partition's owner; every write is idempotent.

``SCHEME`` names this transport in the broker URL (``kafka-nlp://host:port``); it is the
same driver as Faust's ``kafka://`` in every other respect.
"""

from __future__ import annotations

import logging

import aiokafka
from faust.transport.drivers import TRANSPORTS
from faust.transport.drivers import aiokafka as faust_aiokafka
from faust.types import Message

from services.stream.delivery import COUNTS

log = logging.getLogger(__name__)

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
    #: the generation whose first ignored ack was logged
    _logged_generation: int | None = None

    def _new_consumer_thread(self) -> ConsumerThread:
        return ConsumerThread(self, loop=self.loop, beacon=self.beacon)

    def ack(self, message: Message) -> bool:
        """Record the ack only for a message of the current generation while the flow runs
        (module docstring); count the others (``acks_before_rebalance`` on the worker's
        ``/health/`` page)."""
        generation = self.app.consumer_generation_id
        if message.generation_id != generation or not self.flow_active:
            if self._logged_generation != generation:
                self._logged_generation = generation
                log.info("generation %s: ignoring acks of messages fetched before the "
                         "last rebalance or acked during one (e.g. %s offset %d); they "
                         "are read again", generation, message.tp, message.offset)
            COUNTS["acks_before_rebalance"] += 1
            return False
        return super().ack(message)

    async def perform_seek(self) -> None:
        """Seek to the committed offsets, then forget the acks recorded before the seek."""
        await super().perform_seek()
        self._acked.clear()
        self._acked_index.clear()
        self._gap.clear()


class Transport(faust_aiokafka.Transport):
    Consumer = Consumer


TRANSPORTS.aliases[SCHEME] = f"{__name__}:Transport"
