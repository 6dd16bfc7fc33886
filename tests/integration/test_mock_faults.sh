#!/usr/bin/env bash
# stampede mock over loopback: the "faults" checks of mock_checks.py (each starts its own mock).
set -euo pipefail
exec timeout 240 python3 "$STAMPEDE_SRC/tests/integration/mock_checks.py" faults
