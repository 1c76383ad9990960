#!/usr/bin/env bash
# A local Kafka 4 broker for development: fetch | start | stop | status (see kafka_broker.py).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-$here/../.venv/bin/python}"
[ -x "$python" ] || python=python3
exec "$python" "$here/kafka_broker.py" "$@"
