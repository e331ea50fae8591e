#!/bin/sh
# The official image's script at the same path (docker-compose.yml's health check uses it).
exec java -Xmx128m -Dlog4j.configuration=file:/opt/kafka/config/tools-log4j.properties \
  -cp '/opt/kafka/libs/*' kafka.admin.BrokerApiVersionsCommand "$@"
