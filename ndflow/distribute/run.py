"""`python -m ndflow.distribute.run`: Horovod's `horovodrun` for ndflow's collective group.

    python -m ndflow.distribute.run -np 2 python train.py          # two local workers
    python -m ndflow.distribute.run --hosts h1:2,h2:2 python train.py   # four, on two hosts

Each worker gets torch.distributed's variables — RANK, WORLD_SIZE, LOCAL_RANK,
LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT (rank 0's host; a free port by default) — which
`hvd.init()` and MultiWorkerMirroredStrategy read. Its output lines are prefixed with its rank,
as horovodrun does (`[1]<stdout>:...`). When a worker fails, the others are terminated and the
launcher exits with the failing worker's status.

With `--hosts`, ranks are given out host by host in the order listed (`h1:2,h2:2` -> ranks 0-1
on h1, 2-3 on h2). The workers of this machine's host (its names/addresses, or
`--this-host NAME`) are started locally; the others by `ssh HOST 'cd DIR && env ... CMD'`
unless `--this-host` is given, in which case each host runs the launcher itself (as the
network-namespace test does).
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

_TERMINATE_GRACE_SECONDS = 5.0


@dataclass(frozen=True)
class WorkerPlan:
    """One worker process: where it runs, its ranks and its environment additions."""

    host: str
    rank: int
    local_rank: int
    env: dict


def parse_hosts(text: str) -> list[tuple[str, int]]:
    """'h1:2,h2:2' -> [('h1', 2), ('h2', 2)] (a host without ':n' has one slot)."""
    hosts = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, slots = item.rpartition(":")
        if not sep:
            name, slots = item, "1"
        if not name or not slots.isdigit() or int(slots) < 1:
            raise ValueError(f"--hosts entry {item!r} must be HOST:SLOTS with SLOTS >= 1")
        hosts.append((name, int(slots)))
    if not hosts:
        raise ValueError("--hosts lists no host")
    names = [h for h, _ in hosts]
    if len(set(names)) != len(names):
        raise ValueError(f"--hosts lists a host twice: {text!r}")
    return hosts


def plan_workers(hosts: list[tuple[str, int]], num_proc: int | None, master_addr: str,
                 master_port: int) -> list[WorkerPlan]:
    """The worker processes of a run: ranks host by host, with each one's environment."""
    total = sum(slots for _, slots in hosts)
    num_proc = total if num_proc is None else num_proc
    if num_proc < 1 or num_proc > total:
        raise ValueError(f"-np {num_proc} must be between 1 and the {total} slots of the hosts")
    plans, rank = [], 0
    for host, slots in hosts:
        used = min(slots, num_proc - rank)
        for local_rank in range(used):
            env = {"RANK": str(rank), "WORLD_SIZE": str(num_proc),
                   "LOCAL_RANK": str(local_rank), "LOCAL_WORLD_SIZE": str(used),
                   "MASTER_ADDR": master_addr, "MASTER_PORT": str(master_port),
                   "HOROVOD_RANK": str(rank), "HOROVOD_SIZE": str(num_proc),
                   "HOROVOD_LOCAL_RANK": str(local_rank), "HOROVOD_LOCAL_SIZE": str(used)}
            plans.append(WorkerPlan(host, rank, local_rank, env))
            rank += 1
        if rank == num_proc:
            break
    return plans


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _local_names() -> set[str]:
    names = {"localhost", "127.0.0.1", socket.gethostname(), socket.getfqdn()}
    try:
        names.update(socket.gethostbyname_ex(socket.gethostname())[2])
    except OSError:
        pass
    return names


def _pump(stream, rank: int, label: str, out) -> None:
    """Copies `stream`'s lines to `out`, prefixed with the worker's rank."""
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace")
        out.write(f"[{rank}]<{label}>:{line}" if line.endswith("\n") else
                  f"[{rank}]<{label}>:{line}\n")
        out.flush()
    stream.close()


def _command_for(plan: WorkerPlan, command: list[str], local: bool) -> list[str]:
    if local:
        return command
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(plan.env.items()))
    remote = f"cd {shlex.quote(os.getcwd())} && env {exports} {shlex.join(command)}"
    return ["ssh", "-o", "BatchMode=yes", plan.host, remote]


def launch(plans: list[WorkerPlan], command: list[str], local_hosts: set[str],
           only_local: bool) -> int:
    """Starts the workers, relays their output, and returns the run's exit status: the first
    failing worker's (the others are then terminated), else 0."""
    procs, pumps = [], []
    for plan in plans:
        local = plan.host in local_hosts
        if not local and only_local:
            continue
        env = dict(os.environ, **plan.env, PYTHONUNBUFFERED="1")
        proc = subprocess.Popen(_command_for(plan, command, local), env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        procs.append((plan.rank, proc))
        for stream, label, out in ((proc.stdout, "stdout", sys.stdout),
                                   (proc.stderr, "stderr", sys.stderr)):
            t = threading.Thread(target=_pump, args=(stream, plan.rank, label, out), daemon=True)
            t.start()
            pumps.append(t)
    if not procs:
        raise ValueError("No worker of the run is on this host")
    status = 0
    try:
        running = dict(procs)
        while running:
            for rank, proc in list(running.items()):
                code = proc.poll()
                if code is None:
                    continue
                del running[rank]
                if code != 0 and status == 0:
                    status = code if code > 0 else 128 - code
                    sys.stderr.write(f"ndflow.distribute.run: worker {rank} exited with "
                                     f"status {code}; terminating the other workers\n")
                    _terminate([p for p in running.values()])
            time.sleep(0.05)
    except KeyboardInterrupt:
        _terminate([p for _, p in procs])
        status = 130
    for t in pumps:
        t.join(timeout=2.0)
    return status


def _terminate(procs) -> None:
    """SIGTERM to each worker's process group, SIGKILL after a grace period."""
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + _TERMINATE_GRACE_SECONDS
    for p in procs:
        try:
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ndflow.distribute.run",
                                description="Runs a command as data-parallel workers.")
    p.add_argument("-np", "--num-proc", type=int, default=None,
                   help="number of worker processes (default: the hosts' slots)")
    p.add_argument("-H", "--hosts", default=None,
                   help="HOST:SLOTS,... (default: localhost:NP)")
    p.add_argument("--master-addr", default=None,
                   help="rank 0's address for the rendezvous (default: the first host)")
    p.add_argument("--master-port", type=int, default=None,
                   help="rendezvous port (default: a free port; give one with --hosts)")
    p.add_argument("--this-host", default=None,
                   help="start only this host's workers (each host runs the launcher)")
    p.add_argument("command", nargs=argparse.REMAINDER, help="the worker command")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        _parser().error("no command to run")
    try:
        if args.hosts is None:
            if args.num_proc is None:
                raise ValueError("give -np N (local workers) or --hosts HOST:SLOTS,...")
            hosts = [("localhost", args.num_proc)]
        else:
            hosts = parse_hosts(args.hosts)
        first = hosts[0][0]
        master_addr = args.master_addr or ("127.0.0.1" if first == "localhost" else first)
        if args.master_port is None and args.hosts is not None and len(hosts) > 1:
            raise ValueError("--master-port is needed with several --hosts (every host must "
                             "use the same one)")
        master_port = args.master_port or free_port()
        plans = plan_workers(hosts, args.num_proc, master_addr, master_port)
    except ValueError as e:
        _parser().error(str(e))
    local_hosts = {args.this_host} if args.this_host else _local_names()
    return launch(plans, command, local_hosts, only_local=args.this_host is not None)


if __name__ == "__main__":
    sys.exit(main())
