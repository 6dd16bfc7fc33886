#!/usr/bin/env bash
# make realworld, metrics: every saved /metrics page under $REALWORLD/metrics read offline by
# `stampede read-metrics --json`, exactly as a run reads a scraped page. A row per page: what was
# recognised (the dialect), the figures read, and a verdict: FAIL when the dialect is not the
# folder's (vllm, sglang, dynamo, dcgm), when a DCGM blank sentinel leaks into a figure (GPU
# utilisation over 100 %, any figure past 1e14), or when a whole page has lines stampede could
# not parse; note for a quirk we know and handle (a fragment with none of the names we read, the
# "..." elision of a partial copy, a Dynamo component page). The exporter's field lists (*.csv)
# are checked for the DCGM fields stampede reads.
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here/row.sh"
dir=$REALWORLD/metrics
[ -d "$dir" ] || { row "$dir" - "no metrics captures" note; exit 0; }
failed=0
for page in "$dir"/*/*.prom; do
    [ -f "$page" ] || continue
    folder=$(basename "$(dirname "$page")")
    json=$("$STAMPEDE" read-metrics --json "$page" 2>"$RW_SCRATCH/read-metrics.err")
    if [ $? -ne 0 ]; then
        row "$page" - "read-metrics failed: $(head -c 80 "$RW_SCRATCH/read-metrics.err")" FAIL
        failed=1
        continue
    fi
    line=$(python3 - "$folder" "$(basename "$page")" "$json" <<'PY'
import json, sys
folder, name, page = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
dialect = page["dialect"] or "none"
figures = []
for group in ("counters", "gauges"):
    for key, v in page[group].items():
        figures.append(f"{key}={v['value']:.6g}")
for key, h in page["histograms"].items():
    mean = "-" if h["mean_ms"] is None else f"{h['mean_ms']:.4g}ms"
    figures.append(f"{key}:n={h['count']:.0f},mean={mean}")
text = " ".join(figures) or "(no figure stampede reads)"
values = [v["value"] for g in ("counters", "gauges") for v in page[g].values()]
verdict, why = "ok", ""
if any(v is not None and abs(v) >= 1e14 for v in values):
    verdict, why = "FAIL", "a blank sentinel read as a value; "
elif (page["gauges"].get("gpu_util_pct") or {}).get("value", 0) > 100:
    verdict, why = "FAIL", "utilisation over 100 %; "
elif dialect != folder:
    if folder == "dynamo" and dialect == "none":
        verdict, why = "note", "component page, not the frontend: absent; "
    else:
        verdict, why = "FAIL", f"read as {dialect}, expected {folder}; "
elif page["lines_skipped"]:
    if "partial" in name or "fragment" in name:
        verdict, why = "note", f"{page['lines_skipped']} elided lines skipped; "
    else:
        verdict, why = "FAIL", f"{page['first_error']}; "
elif not figures:
    verdict = "note"
    why = "fragment of names stampede does not read; "
print(verdict + "\t" + dialect + "\t" + (why + text)[:200])
PY
)
    IFS=$'\t' read -r verdict dialect figures <<<"$line"
    row "$page" "$dialect" "$figures" "$verdict"
    [ "$verdict" = FAIL ] && failed=1
done
for list in "$dir"/dcgm/*.csv; do
    [ -f "$list" ] || continue
    case $(basename "$list") in
    dcp-*) want="DCGM_FI_PROF_GR_ENGINE_ACTIVE" ;;
    *) want="DCGM_FI_DEV_GPU_UTIL DCGM_FI_DEV_POWER_USAGE DCGM_FI_DEV_FB_USED DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" ;;
    esac
    missing=""
    for field in $want; do
        grep -q "^ *$field *," "$list" || missing="$missing $field"
    done
    if [ -z "$missing" ]; then
        row "$list" "field list" "lists the fields stampede reads: $(echo $want | sed 's/DCGM_FI_//g')" ok
    else
        row "$list" "field list" "missing:$missing" FAIL
        failed=1
    fi
done
exit $failed
