# The engaged server, after the Hummingbird and Vapor templates: build with the Swift image,
# run on plain Ubuntu. Build steps are the Makefile's targets that .ci/run also runs, so CI
# exercises them (scripts/check-container-files.sh fails when they drift apart).
#   docker build -t engaged .

# ================================
# Build image
# ================================
FROM swift:6.3-noble AS build

# The Swift image has neither make (the build runs through the Makefile) nor sqlite3.h (GRDB
# builds against the system's SQLite).
RUN export DEBIAN_FRONTEND=noninteractive DEBCONF_NONINTERACTIVE_SEEN=true \
    && apt-get -q update \
    && apt-get -q install -y make libsqlite3-dev \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /build

# Dependencies first, in a layer of their own: it is rebuilt only when the manifest or the
# pinned versions change, not on every source change. Package.resolved is not committed, so
# it is optional here.
COPY ./Package.* ./
RUN swift package resolve $([ -f ./Package.resolved ] && echo "--force-resolved-versions" || true)

COPY . .

# CI's target; the Makefile exports ENGAGEMENT_OPTIMIZE=1 (cross-module optimization). The
# static Swift runtime means the run image needs no Swift libraries.
RUN make engaged-release RELEASE_FLAGS=--static-swift-stdlib

# The binary, the resource bundles SwiftPM put beside it (EngagementEngine_Content.resources
# holds the templates, found next to the executable at run time; without it engaged cannot
# start), and the static backtracer so a crash logs a symbolicated backtrace.
WORKDIR /staging
RUN cp /build/.build/release/engaged ./ \
    && find -L /build/.build/release/ -maxdepth 1 -name '*.resources' -exec cp -Ra {} ./ \; \
    && cp /usr/libexec/swift/linux/swift-backtrace-static ./ \
    && chmod -R a-w ./

# ================================
# Run image
# ================================
FROM ubuntu:noble

# tzdata: users' time zones; ca-certificates: TLS to APNs and the coach; libsqlite3-0: the
# embedded store (linked dynamically, as built against libsqlite3-dev).
RUN export DEBIAN_FRONTEND=noninteractive DEBCONF_NONINTERACTIVE_SEEN=true \
    && apt-get -q update \
    && apt-get -q dist-upgrade -y \
    && apt-get -q install -y --no-install-recommends ca-certificates tzdata libsqlite3-0 \
    && rm -rf /var/lib/apt/lists/*

# A system user without a login; /data is its only writable place (made before VOLUME so a
# fresh named volume takes its owner).
RUN useradd --system --user-group --no-create-home --home-dir /app --shell /usr/sbin/nologin engaged \
    && mkdir /data && chown engaged:engaged /data

# Owned by root and read-only: the server cannot change its own binary or templates.
WORKDIR /app
COPY --from=build /staging /app

ENV PATH="/app:$PATH" \
    SWIFT_BACKTRACE=enable=yes,sanitize=yes,threads=all,images=all,interactive=no,swift-backtrace=/app/swift-backtrace-static

USER engaged:engaged
VOLUME /data
EXPOSE 8080

# Ready, not only alive: /readyz is 200 when the store answers (and a PostgreSQL schema is
# current), 503 otherwise; /healthz is liveness only. Ubuntu's base image has no curl or wget,
# so bash's /dev/tcp asks, with no package added. Assumes the default port 8080; workers and
# one-off commands (no HTTP) turn it off (compose.yaml).
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/8080 && printf 'GET /readyz HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -q '^HTTP/1\\.1 200 '"]

ENTRYPOINT ["engaged"]
# The embedded SQLite store in the volume. Secrets come from the environment:
# ENGAGED_API_KEY and ENGAGED_USER_TOKEN_KEYS (see docs/SERVER.md, "Running in a container").
CMD ["serve", "--data-dir", "/data", "--host", "0.0.0.0", "--port", "8080"]
