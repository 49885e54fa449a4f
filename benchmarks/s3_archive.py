"""S3 archive benchmark: what an archive in a bucket costs a night, a rerun and a backfill from the bucket alone.

Two homes get the same ``--days`` of synthetic chats (``--sessions`` x ``--messages`` a
day): L archives to a local folder, S to ``s3://bucket/home`` on moto's S3 server
(``ThreadedMotoServer`` on 127.0.0.1, in this process: the same 2 cores serve S3 and
kenang, so the figures include the server's own work). Printed for each: the first
nightly's wall and its archive-stage work, a rerun (nothing new: for S the bucket is
listed, nothing is pulled or pushed), and for S a backfill of the whole range with the
local copy and the warehouse removed (everything comes back from the bucket). No
target is named in the issue; the figures say what the bucket adds.

Run:  .venv/bin/python benchmarks/s3_archive.py
      .venv/bin/python benchmarks/s3_archive.py --days 5      # smoke
"""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import os
import shutil
import socket
import time

import _common as c

START = dt.date(2026, 1, 1)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--days", type=int, default=60, help="days of chats (default 60)")
    c.size_args(p)
    args = p.parse_args(argv)
    last = START + dt.timedelta(days=args.days - 1)
    now = c.run_after(last)
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    os.environ.update(
        AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}",
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        AWS_DEFAULT_REGION="us-east-1",
    )
    try:
        import boto3

        boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"]).create_bucket(
            Bucket="kenang-bench", ObjectLockEnabledForBucket=True
        )
        print(
            f"s3 archive: {args.days} days x {args.sessions} sessions x {args.messages} messages; "
            f"L = local folder, S = s3://kenang-bench/home on moto at 127.0.0.1:{port} (object lock on)"
        )
        with c.bench_env("s3") as env:
            print(f"prefect test server start-up: {env.startup_seconds:.1f} s (excluded from all timings)")
            from flows.config import init_home
            from flows.store import mount

            homes = {
                "L": c.new_home(env.root / "L"),
                "S": init_home(
                    env.root / "S",
                    {
                        "summarizer": {"backend": "extractive"},
                        "embedder": {"backend": "none"},
                        "paths": {"archive": "s3://kenang-bench/home"},
                    },
                )[0],
            }
            mount.claim(homes["S"])  # as `kenang init` does
            for name, settings in homes.items():
                w = c.write_files(settings.paths.active, c.corpus(START, args.days, args.sessions, args.messages))
                first, wall = c.timed_nightly(settings.paths.home, now)
                again, wall2 = c.timed_nightly(settings.paths.home, now)
                remote = first.get("archive_remote") or {}
                print(f"{name}: {w.files} files, {w.bytes / 2**20:.1f} MiB")
                print(
                    f"  first nightly {wall:.2f} s (archive stage work {first['work_seconds'].get('archive', 0):.2f} s"
                    + (
                        f"; {remote.get('pushed', 0)} objects uploaded after the sources' "
                        f"{first['archive']['placed']} confirmed"
                        if remote
                        else ""
                    )
                    + ")"
                )
                print(
                    f"  rerun {wall2:.2f} s (archive stage work {again['work_seconds'].get('archive', 0):.2f} s"
                    + (
                        f"; pulled {again['archive_remote']['pulled']}, pushed {again['archive_remote']['pushed']}"
                        if remote
                        else ""
                    )
                    + ")"
                )
                assert "degraded" not in first and "degraded" not in again, (
                    first.get("degraded"),
                    again.get("degraded"),
                )
            s = homes["S"]
            shutil.rmtree(s.paths.archive)
            shutil.rmtree(s.paths.warehouse)
            from flows.pipeline import backfill

            t0 = time.perf_counter()
            res = backfill(start=START, end=last, home=str(s.paths.home), no_budget=True)
            wall = time.perf_counter() - t0
            print(
                f"S: backfill {START}..{last} from the bucket alone (local copy and warehouse removed): {wall:.2f} s; "
                f"pulled {res['archive_remote']['pulled']} objects, loaded {res['load']['loaded']} days "
                f"(archive stage work {res['work_seconds'].get('archive', 0):.2f} s)"
            )
    finally:
        server.stop()


if __name__ == "__main__":
    main()
