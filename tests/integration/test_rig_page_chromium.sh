#!/bin/bash
# The rig's page (stampede serve --page, docs/rig.md "The page") in headless Chromium: with one
# run archived, one running and one queued, the page shows the running run with its live figures
# and a request-rate chart that has data marks, the queue, and the archive newest first with a
# link to each finished run's report.html (which the page serves); ?user= filters the archive;
# nothing on it references the network; the screenshot is not blank. A --page beyond loopback
# without a token is refused.
# ctest: parallel (rendering and DOM content only)
source "$(dirname "$0")/protocol_lib.sh"
source "$(dirname "$0")/rig_lib.sh"
command -v chromium >/dev/null || fail "chromium is not installed (make test-deps installs it)"

rc=0
"$STAMPEDE" serve --bind "$USERS" --key "$WORK/rig.key" --authorized-keys "$WORK/users" \
    --archive "$WORK/refused" --config "$WORK/rig.yaml" --page 0.0.0.0:0 2>"$WORK/refused.err" ||
    rc=$?
assert_equal "serve --page 0.0.0.0:0 without a token" "$rc" 1
grep -q -- "--page 0.0.0.0:0: " "$WORK/refused.err" || fail "$(cat "$WORK/refused.err")"

start_serve "$WORK/serve.err" --page 127.0.0.1:0
PAGE=$(wait_for_line "$WORK/serve.err" 5 "the page on http://127\.0\.0\.1:[0-9]+/") ||
    fail "no page: $(cat "$WORK/serve.err")"
PAGE=${PAGE#the page on }
start_rig_worker
write_workload "$WORK/short.yaml" ignore_eos=true max_requests=20 concurrency=2
# Long enough to be running still when the three Chromium calls end on a loaded machine (they
# made the test take 20 s in one full ctest run, 9 s alone, and run 2 had ended: the page had no
# running chart). Nothing waits for its end.
write_workload "$WORK/long.yaml" ignore_eos=true duration=40s concurrency=2
as bob submit "$WORK/short.yaml" >/dev/null 2>&1 || fail "run 1 not queued"
wait_state 1 done 20
as alice submit "$WORK/long.yaml" >/dev/null 2>&1 || fail "run 2 not queued"
as bob submit "$WORK/short.yaml" >/dev/null 2>&1 || fail "run 3 not queued"
wait_state 2 running 10
wait_for_line "$WORK/serve.err" 10 "\] run 2: [3-9]\.[0-9] s of 40 s" >/dev/null || fail "run 2 is slow"

export HOME="$WORK/home"
mkdir -p "$HOME"
chrome=(chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions
    --disable-background-networking --user-data-dir="$WORK/profile")
curl -sf "$PAGE" -o "$WORK/page.html" || fail "GET $PAGE failed"
timeout 60 "${chrome[@]}" --window-size=1300,1400 --screenshot="$WORK/shot.png" "$PAGE" \
    >"$WORK/shot.log" 2>&1 || fail "chromium --screenshot failed: $(tail -5 "$WORK/shot.log")"
timeout 60 "${chrome[@]}" --dump-dom "$PAGE" >"$WORK/dom.html" 2>"$WORK/dom.log" ||
    fail "chromium --dump-dom failed: $(tail -5 "$WORK/dom.log")"
timeout 60 "${chrome[@]}" --dump-dom "${PAGE}?user=bob" >"$WORK/bob.html" 2>>"$WORK/dom.log" ||
    fail "chromium --dump-dom ?user=bob failed"
timeout 60 python3 "$STAMPEDE_SRC/tests/integration/report_html_check.py" "$WORK/page.html" \
    "$WORK/shot.png" "$WORK/dom.html" 1 || fail "the page's checks"
python3 - "$WORK/dom.html" "$WORK/bob.html" <<'PY' || fail "the page's content"
import re, sys
from html.parser import HTMLParser

class Tables(HTMLParser):
    """The rows of each table (by id) and of the running section, as lists of cell texts."""
    def __init__(self):
        super().__init__()
        self.where, self.rows, self.links, self.cell = None, {}, [], None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("table", "section") and a.get("id"):
            self.where = a["id"]
            self.rows.setdefault(self.where, [])
        elif tag == "tr" and self.where:
            self.rows[self.where].append([])
        elif tag == "td" and self.where:
            self.cell = ""
        elif tag == "a" and self.where == "archive":
            self.links.append(a.get("href"))
    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            self.rows[self.where][-1].append(self.cell.strip())
            self.cell = None
        elif tag == "table" and self.where in ("queue", "archive"):
            self.where = None
    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data

page = Tables()
page.feed(open(sys.argv[1]).read())
running = [r for r in page.rows["running"] if r]
assert len(running) == 1 and running[0][:3] == ["2", "alice", "g1"], running
assert running[0][3] == "run" and float(running[0][6]) > 0, f"no request rate while running: {running}"
queue = [r for r in page.rows["queue"] if r]
assert [r[:4] for r in queue] == [["1", "3", "bob", "g1"]], queue
archive = [r for r in page.rows["archive"] if r]
assert [(r[0], r[1], r[4]) for r in archive] == [("3", "bob", "queued"), ("2", "alice", "running"),
                                                 ("1", "bob", "done")], archive
assert page.links == ["/runs/1/report.html"], page.links
assert float(archive[2][9]) > 0, archive[2]
bob = Tables()
bob.feed(open(sys.argv[2]).read())
assert [r[0] for r in bob.rows["archive"] if r] == ["3", "1"], bob.rows["archive"]
print("ok: running, queue, archive and the filter")
PY
curl -sf "${PAGE}runs/1/report.html" -o "$WORK/report.html" || fail "the page does not serve run 1's report.html"
cmp "$WORK/report.html" "$WORK/arch/runs/1/report.html" || fail "run 1's report.html differs"
code=$(curl -s -o /dev/null -w '%{http_code}' "${PAGE}runs/../rig.db")
[ "$code" = 404 ] || fail "the page served ../rig.db: HTTP $code"
echo "ok: the rig's page in Chromium"
