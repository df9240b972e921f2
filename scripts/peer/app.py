"""The replica a data team would hand-write: GET /v1/employees from hrsync's warehouse tables.

Kept beside scripts/bench-serve-peer.sh, which measures hrsync serve against it side by side
(issue 26). It reads the tables hrsync's sync writes (docs/warehouse.md): a page of the served
employees (listed, not deleted), in id order, joined to their working pattern, holiday allowance,
department, division, location, line manager and holiday approver, with Total from hr.meta (kept
by hrsync's triggers) in the same statement, so that the page and its Total are one snapshot. It
answers the interface's JSON shape ({"employees": [...]}, Link and Total headers).

Written as a competent team would: a psycopg2 connection pool per worker process, the page's ids
found first (OFFSET over the visible-id index) and only those rows joined, one round trip a page,
the JSON built with the standard library. No answer cache: the data team's replica has none.

Settings, from the environment:
  PEER_DATABASE_URL  libpq URL of the warehouse (required)
  PEER_SCHEMA        the warehouse schema (default hr)
  PEER_API_KEY       the key clients send in X-API-KEY (required)
  PEER_POOL_MAX      connections a worker process keeps at most (default 4)

Run it with gunicorn: python3 -m gunicorn --chdir scripts/peer app:app
"""

import datetime
import hmac
import json
import os
import threading
from urllib.parse import urlencode

import psycopg2
import psycopg2.pool
from flask import Flask, Response, request

DSN = os.environ["PEER_DATABASE_URL"]
SCHEMA = os.environ.get("PEER_SCHEMA", "hr")
API_KEY = os.environ["PEER_API_KEY"].encode()
POOL_MAX = int(os.environ.get("PEER_POOL_MAX", "4"))

DEFAULT_PER_PAGE = 25
MAX_PER_PAGE = 100

# The page's ids first (an index scan of employees_visible_id), then the joins for those rows
# alone: joining before OFFSET would join every row skipped. Total rides along in the same
# statement (one snapshot, one round trip); a page past the end has no row to carry it.
PAGE_SQL = """
WITH page AS (
    SELECT id FROM employees
    WHERE listed AND deleted_at IS NULL
    ORDER BY id
    LIMIT %(limit)s OFFSET %(offset)s
)
SELECT e.id, e.account_id, e.first_name, e.last_name, e.email, e.job_title, e.status,
       e.company_join_date, e.job_start_date, e.length_of_service_in_months,
       e.age, e.full_or_part_time, e.notice_period,
       e.receives_statutory_holidays, e.hr, e.created_at, e.updated_at, e.extra,
       wp.id, wp.name, wp.total_hours, wp.is_default,
       ha.id, ha.name,
       d.id, d.name,
       dv.id, dv.name,
       lo.id, lo.name,
       lm.id, lm.first_name, lm.last_name, lm.email,
       ap.id, ap.first_name, ap.last_name, ap.email,
       (SELECT employees_total FROM meta)
FROM page
JOIN employees e ON e.id = page.id
LEFT JOIN working_patterns wp ON wp.id = e.working_pattern_id
LEFT JOIN holiday_allowances ha ON ha.id = e.holiday_allowance_id
LEFT JOIN departments d ON d.id = e.department_id
LEFT JOIN divisions dv ON dv.id = e.division_id
LEFT JOIN locations lo ON lo.id = e.location_id
LEFT JOIN employees lm ON lm.id = e.line_manager_id
LEFT JOIN employees ap ON ap.id = e.holiday_approver_id
ORDER BY e.id
"""
TOTAL = 38  # the column of PAGE_SQL holding Total
TOTAL_SQL = "SELECT employees_total FROM meta"

app = Flask(__name__)

_pool = None
_pool_lock = threading.Lock()


def pool():
    """The worker process's pool, made on first use (after gunicorn forks, not before)."""
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = psycopg2.pool.ThreadedConnectionPool(
                    1, POOL_MAX, DSN, options=f"-c search_path={SCHEMA}"
                )
    return _pool


def utc(ts):
    if ts is None:
        return None
    return ts.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def day(d):
    return None if d is None else d.isoformat()


def ref(id_, name):
    return None if id_ is None else {"id": id_, "name": name}


def person(id_, first, last, email):
    if id_ is None:
        return None
    return {"id": id_, "first_name": first, "last_name": last, "email": email}


def employee(r):
    rec = {
        "id": r[0],
        "account_id": r[1],
        "first_name": r[2],
        "last_name": r[3],
        "email": r[4],
        "job_title": r[5],
        "status": r[6],
        "company_join_date": day(r[7]),
        "job_start_date": day(r[8]),
        "length_of_service_in_months": r[9],
        "age": r[10],
        "full_or_part_time": r[11],
        "notice_period": r[12],
        "working_pattern": None
        if r[18] is None
        else {
            "id": r[18],
            "name": r[19],
            "total_hours": None if r[20] is None else str(r[20]),
            "default": r[21],
        },
        "holiday_allowance": ref(r[22], r[23]),
        "line_manager": person(r[30], r[31], r[32], r[33]),
        "holiday_approver": person(r[34], r[35], r[36], r[37]),
        "department": ref(r[24], r[25]),
    }
    if r[26] is not None:
        rec["division"] = ref(r[26], r[27])
    if r[28] is not None:
        rec["location"] = ref(r[28], r[29])
    rec["receives_statutory_holidays"] = r[13]
    rec["hr"] = r[14]
    rec["created_at"] = utc(r[15])
    rec["updated_at"] = utc(r[16])
    # What the source sent beyond the modelled fields (middle_name, dob, custom_fields…).
    if r[17]:
        for k, v in r[17].items():
            rec.setdefault(k, v)
    return rec


def positive(name, default):
    raw = request.args.get(name)
    if raw is None:
        return default
    try:
        n = int(raw)
    except ValueError:
        return None
    return n if n > 0 else None


def links(page, per_page, pages, per_page_sent):
    base = request.base_url

    def url(p):
        q = {"page": p}
        if per_page_sent:
            q["per_page"] = per_page
        return f"<{base}?{urlencode(q)}>"

    out = []
    if page > 1:
        out.append(f'{url(1)}; rel="first"')
        out.append(f'{url(min(page - 1, pages))}; rel="prev"')
    out.append(f'{url(pages)}; rel="last"')
    if page < pages:
        out.append(f'{url(page + 1)}; rel="next"')
    return ", ".join(out)


def error(status, message):
    return Response(json.dumps({"error": message}), status=status, mimetype="application/json")


@app.get("/v1/employees")
def list_employees():
    if not hmac.compare_digest(request.headers.get("X-API-KEY", "").encode(), API_KEY):
        return error(401, "unauthorized")
    page = positive("page", 1)
    per_page = positive("per_page", DEFAULT_PER_PAGE)
    if page is None or per_page is None:
        return error(400, "page and per_page are positive integers")
    per_page = min(per_page, MAX_PER_PAGE)

    p = pool()
    conn = p.getconn()
    try:
        if not conn.autocommit:
            # Each statement its own read-only transaction: no BEGIN/ROLLBACK round trips.
            conn.set_session(readonly=True, autocommit=True)
        with conn.cursor() as cur:
            cur.execute(PAGE_SQL, {"limit": per_page, "offset": (page - 1) * per_page})
            rows = cur.fetchall()
            if rows:
                total = rows[0][TOTAL]
            else:
                cur.execute(TOTAL_SQL)
                total = cur.fetchone()[0]
    except psycopg2.Error:
        p.putconn(conn, close=True)
        raise
    p.putconn(conn)

    body = json.dumps(
        {"employees": [employee(r) for r in rows]},
        ensure_ascii=False,
        separators=(",", ":"),
    ).encode()
    pages = max(1, -(-total // per_page))
    resp = Response(body, mimetype="application/json")
    resp.headers["Total"] = str(total)
    resp.headers["Per-Page"] = str(per_page)
    resp.headers["Link"] = links(page, per_page, pages, "per_page" in request.args)
    return resp
