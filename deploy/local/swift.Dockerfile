# A Swift build image for deploy/Dockerfile's release build from source (SWIFT_IMAGE) where
# swift:6.2-bookworm cannot be pulled: the host's toolchain on the debootstrapped Debian, with
# what the official image installs for it, and the host's mirror of the package repositories
# (git reads github.com from it, as on the host: the build reaches no registry).
# The build context (scripts/check-containers.sh --release makes it, hard links where it can):
#   swift/           the toolchain's root, its usr/ (the host's /opt/swift)
#   swift-packages/  the package mirror (the host's /opt/swift-packages)
#   gitconfig        the url.….insteadOf lines that point git at the mirror
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      binutils gcc libc6-dev libgcc-12-dev libstdc++-12-dev libcurl4-openssl-dev libxml2-dev \
      libedit2 libncurses6 libsqlite3-0 zlib1g-dev tzdata git ca-certificates pkg-config unzip \
 && rm -rf /var/lib/apt/lists/*
COPY swift/usr/ /usr/
COPY swift-packages/ /opt/swift-packages/
COPY gitconfig /etc/gitconfig
RUN swift --version
