# PostgreSQL from Debian's packages, for the container test where postgres:16 cannot be
# pulled: a stand-in that compose.yaml's postgres service runs unchanged (docker-entrypoint.sh,
# pg_isready, the postgres user, PGDATA at /var/lib/postgresql/data).
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN mkdir -p /etc/postgresql-common/createcluster.d \
 && echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.d/no-main.conf \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/*
COPY postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:$PATH \
    PGDATA=/var/lib/postgresql/data
EXPOSE 5432
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["postgres"]
