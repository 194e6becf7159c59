# Interlock gateway: slim Python base, non-root user, healthcheck.
# Without server.api_keys the gateway refuses non-loopback binds; --allow-non-loopback is the
# explicit opt-in a container needs (publish the port only where you mean to).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

RUN useradd --create-home --uid 10001 interlock
WORKDIR /app
COPY pyproject.toml README.md ./
COPY interlock ./interlock
RUN pip install '.[redis]' && mkdir -p /data && chown interlock:interlock /data

USER interlock
WORKDIR /data
EXPOSE 8787
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8787/healthz', timeout=2).status == 200 else 1)"]
CMD ["interlock", "serve", "--host", "0.0.0.0", "--port", "8787", "--allow-non-loopback"]
