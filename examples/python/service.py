"""A small job service instrumented with usertrace.

    pip install ./bindings-python
    python examples/python/service.py --jobs 20

Watch it while it runs (as root, with a kernel that has user_events):

    perf record -e 'user_events:shop_*' -e 'user_events:python_*' -a -- sleep 5
    perf script

or through ftrace: echo 1 > /sys/kernel/tracing/events/user_events/shop_job/enable
and read /sys/kernel/tracing/trace. Without user_events it runs the same,
untraced, and says why at start-up.
"""

from __future__ import annotations

import argparse
import logging
import random
import time

import usertrace
import usertrace.logging

shop = usertrace.Provider("shop")
job_done = shop.tracepoint("job", id="u64", kind=str, items="u16", micros="u64", ok=bool)
# shop_handle(span_begin, job_id, kind), ended by shop_span_end(span_end) or,
# when an exception leaves it, shop_span_error(span_end, error).
handling = shop.span("handle", job_id="u64", kind=str)

log = logging.getLogger("shop")
log.addHandler(usertrace.logging.Handler(shop))  # emits shop_log events
log.setLevel(logging.DEBUG)


@usertrace.traced(provider=shop)  # the span shop_price
def price(items: int) -> float:
    time.sleep(0.001 * items)
    return round(items * 9.99, 2)


def handle(job_id: int, kind: str, items: int) -> None:
    started = time.perf_counter_ns()
    ok = True
    try:
        with handling.begin(job_id, kind), usertrace.traced("checkout", provider=shop):
            total = price(items)
            if kind == "refund" and items > 4:
                raise ValueError("refunds over 4 items need approval")
        log.info("job %d: %s of %d items, total %.2f", job_id, kind, items, total)
    except ValueError as e:
        ok = False
        log.warning("job %d refused: %s", job_id, e)
    # Nothing below is computed while no tracer listens.
    if job_done.enabled:
        micros = (time.perf_counter_ns() - started) // 1000
        job_done.emit(job_id, kind, items, micros, ok)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=10)
    parser.add_argument("--delay", type=float, default=0.05, help="seconds between jobs")
    args = parser.parse_args()

    status = usertrace.status()
    print(f"usertrace: {status}")
    if not job_done.registered and job_done.registration_error is not None:
        print(f"usertrace: tracepoints stay disabled: {job_done.registration_error.kind.name}")
    rng = random.Random(1)
    for job_id in range(1, args.jobs + 1):
        handle(job_id, rng.choice(["order", "order", "refund"]), rng.randint(1, 8))
        time.sleep(args.delay)
    shop.close()


if __name__ == "__main__":
    main()
