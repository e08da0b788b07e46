#ifndef RESCIND_CRDKAFKA_SHIM_H
#define RESCIND_CRDKAFKA_SHIM_H
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

/// Non-variadic wrapper over `rd_kafka_producev` (variadic C functions are not
/// callable from Swift). Copies key and value (`RD_KAFKA_MSG_F_COPY`), lets the
/// configured partitioner choose the partition, and attaches `opaque` to the
/// message so that its delivery report can be matched.
///
/// `headers` may be NULL. On success librdkafka owns `headers`; on failure the
/// caller still owns them and must destroy them.
static inline rd_kafka_resp_err_t rescind_rd_kafka_produce(
    rd_kafka_t *rk, const char *topic, const void *key, size_t key_len,
    const void *value, size_t value_len, rd_kafka_headers_t *headers,
    void *opaque) {
    if (headers == NULL) {
        return rd_kafka_producev(
            rk, RD_KAFKA_V_TOPIC(topic),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
            RD_KAFKA_V_KEY(key, key_len),
            RD_KAFKA_V_VALUE((void *)value, value_len),
            RD_KAFKA_V_OPAQUE(opaque), RD_KAFKA_V_END);
    }
    return rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_KEY(key, key_len),
        RD_KAFKA_V_VALUE((void *)value, value_len),
        RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_OPAQUE(opaque),
        RD_KAFKA_V_END);
}

#endif
