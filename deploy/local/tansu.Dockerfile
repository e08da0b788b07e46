# A Kafka-protocol broker for the container test where apache/kafka cannot be pulled: Tansu
# (memory storage), the binary scripts/tansu.sh installs, copied in by the build context.
# Clients need a librdkafka newer than Debian's 2.0.2 to talk to it (compose.local.yaml).
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
COPY tansu /usr/local/bin/tansu
EXPOSE 9092
ENTRYPOINT ["tansu", "broker", "--listener-url", "tcp://0.0.0.0:9092", \
            "--advertised-listener-url", "tcp://kafka:9092", "--storage-engine", "memory://tansu/"]
