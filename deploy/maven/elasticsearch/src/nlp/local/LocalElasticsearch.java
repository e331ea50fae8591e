package nlp.local;

import org.codelibs.elasticsearch.runner.ElasticsearchClusterRunner;

/**
 * Starts the one embedded Elasticsearch node of the local stack and keeps it running
 * until the JVM gets SIGTERM.
 *
 * <p>The cluster runner's own main class probes for a free HTTP port and gives up above
 * 9299, so NLP_ES_PORT=19200 would fail. Here the port is taken as given (-baseHttpPort + 1):
 * deploy/elasticsearch.py has already checked it is free and fails loudly if not. All other
 * arguments are the runner's (-numOfNode, -clusterName, -basePath, -confPath, ...).
 */
public final class LocalElasticsearch {

    private LocalElasticsearch() {
    }

    public static void main(final String[] args) throws InterruptedException {
        final ElasticsearchClusterRunner runner = new ElasticsearchClusterRunner();
        runner.setMaxHttpPort(-1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                runner.close();
            } catch (final Exception e) {
                e.printStackTrace();
            }
        }));
        try {
            runner.build(args);
        } catch (final RuntimeException e) {
            e.printStackTrace();
            System.exit(1);
        }
        while (!runner.isClosed()) {
            Thread.sleep(1000L);
        }
    }
}
