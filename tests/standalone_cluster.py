"""A real Spark standalone cluster for the tests: one master and one worker (or more) on 127.0.0.1.

Both run from PySpark's own ``bin/spark-class`` (SPARK_HOME is the pyspark package), each in a
process group of its own, so `stop()` ends them and everything they started (the executors and
their Python workers), also after a failed test. Drivers run as subprocesses
(`runDriver`): one Python process holds one SparkContext, and the tests' shared session is local.

Every address is 127.0.0.1 with ports chosen free; every wait has a timeout.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import pyspark
from jvm_options import QUICK_JVM
from kafka_broker import freePort

SPARK_HOME = Path(pyspark.__file__).resolve().parent
REPO = Path(__file__).resolve().parents[1]

# An application's settings on this cluster: small executors and few partitions, since the
# cluster shares two cores with the rest of the machine; the driver on the loopback address.
APP_CONF = {
    "spark.executor.memory": "512m",
    "spark.cores.max": "2",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.sparkwin.keyGroups": "2",
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.extraJavaOptions": QUICK_JVM,
    "spark.executor.extraJavaOptions": QUICK_JVM,
}


class ClusterError(RuntimeError):
    """The cluster did not start, or a driver failed or ran out of time."""


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(none)"


def _stopGroup(process: subprocess.Popen[bytes], grace: float = 15.0) -> None:
    """SIGTERM to the process's group (it leads one), SIGKILL after `grace` seconds."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    try:  # the group's other members (executors, Python workers) too
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


class StandaloneCluster:
    """One standalone master and `workers` workers (each `cores` cores, `memory` for executors).

    Example::

        with StandaloneCluster() as cluster:
            cluster.runDriver(REPO / "tests" / "job.py", timeout=120)
    """

    def __init__(
        self, cores: int = 2, memory: str = "1g", startTimeout: float = 90.0, workers: int = 1
    ) -> None:
        self.cores = cores
        self.memory = memory
        self.workerCount = workers
        self.startTimeout = startTimeout
        self.directory = Path(tempfile.mkdtemp(prefix="sparkwin-cluster-"))
        self.port = freePort()
        self.uiPort = freePort()
        self.master: subprocess.Popen[bytes] | None = None
        self.workers: list[subprocess.Popen[bytes]] = []

    @property
    def worker(self) -> subprocess.Popen[bytes] | None:
        """The first worker (the only one, unless more were asked for)."""
        return self.workers[0] if self.workers else None

    @property
    def masterUrl(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def __enter__(self) -> StandaloneCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of the cluster's processes and of drivers: PySpark's SPARK_HOME, the
        loopback address, and this interpreter for Python workers (it has sparkwin's
        dependencies).
        """
        env = dict(os.environ)
        for name in ("PYSPARK_SUBMIT_ARGS", "PYSPARK_GATEWAY_PORT", "SPARK_CONF_DIR"):
            env.pop(name, None)
        env.update(
            SPARK_HOME=str(SPARK_HOME),
            SPARK_LOCAL_IP="127.0.0.1",
            SPARK_LOCAL_HOSTNAME="127.0.0.1",
            PYSPARK_PYTHON=sys.executable,
            PYSPARK_DRIVER_PYTHON=sys.executable,
            SPARK_DAEMON_MEMORY="256m",
            SPARK_DAEMON_JAVA_OPTS=QUICK_JVM,
        )
        env.update(extra)
        return env

    def _daemon(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        with open(self.directory / f"{name}.log", "wb") as log:
            return subprocess.Popen(
                [str(SPARK_HOME / "bin" / "spark-class"), *args],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.directory,
                env=self.env(SPARK_WORKER_DIR=str(self.directory / "work")),
                start_new_session=True,  # its own process group: stop() ends all it started
            )

    def start(self) -> None:
        try:
            self.master = self._daemon(
                "master",
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--webui-port",
                str(self.uiPort),
            )
            deadline = time.monotonic() + self.startTimeout
            self._await(lambda: self._state() is not None, deadline, "master")
            for i in range(self.workerCount):
                self.workers.append(
                    self._daemon(
                        self._workerName(i),
                        "org.apache.spark.deploy.worker.Worker",
                        "--host",
                        "127.0.0.1",
                        "--port",
                        str(freePort()),
                        "--webui-port",
                        str(freePort()),
                        "--cores",
                        str(self.cores),
                        "--memory",
                        self.memory,
                        "--work-dir",
                        str(self.directory / f"work-{i}"),
                        self.masterUrl,
                    )
                )
            self._await(lambda: self.aliveWorkers() == self.workerCount, deadline, "workers")
        except BaseException:
            self.stop()
            raise

    def _state(self) -> dict | None:
        """The master's state as its web UI's /json gives it, or None while it does not answer."""
        try:
            url = f"http://127.0.0.1:{self.uiPort}/json"
            with urllib.request.urlopen(url, timeout=2) as answer:
                return dict(json.load(answer))
        except (OSError, ValueError):
            return None

    def aliveWorkers(self) -> int:
        state = self._state() or {}
        return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")

    def _await(self, ready, deadline: float, what: str) -> None:  # type: ignore[no-untyped-def]
        while not ready():
            named = [("master", self.master)] + [
                (self._workerName(i), w) for i, w in enumerate(self.workers)
            ]
            for name, process in named:
                if process is not None and process.poll() is not None:
                    raise ClusterError(f"the {name} exited ({process.returncode}):\n{self.logs()}")
            if time.monotonic() > deadline:
                raise ClusterError(
                    f"the {what} was not up within {self.startTimeout} s\n{self.logs()}"
                )
            time.sleep(0.2)

    @staticmethod
    def _workerName(i: int) -> str:
        return "worker" if i == 0 else f"worker-{i}"

    def logs(self) -> str:
        names = ["master"] + [self._workerName(i) for i in range(len(self.workers))]
        return "\n".join(f"--- {n}.log ---\n{_tail(self.directory / f'{n}.log')}" for n in names)

    def executorPids(self) -> list[int]:
        """The executors the worker started (CoarseGrainedExecutorBackend JVMs)."""
        pids = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                command = (entry / "cmdline").read_bytes().split(b"\0")
                groupId = os.getpgid(int(entry.name))
            except (OSError, ProcessLookupError):
                continue
            worker = self.worker
            if (
                worker is not None
                and groupId == worker.pid
                and b"org.apache.spark.executor.CoarseGrainedExecutorBackend" in command
            ):
                pids.append(int(entry.name))
        return pids

    def startDriver(
        self, command: list[str], env: dict[str, str] | None = None
    ) -> tuple[subprocess.Popen[bytes], Any]:
        """Start a driver (a Python script, spark-submit) in a process group of its own; its
        output goes to a temporary file. Finish it with `awaitDriver`.
        """
        out = tempfile.TemporaryFile()
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env or self.env(),
            start_new_session=True,
        )
        return process, out

    def awaitDriver(self, driver: tuple[subprocess.Popen[bytes], Any], timeout: float) -> str:
        """The driver's output once it ends, or ClusterError with that output when it fails or
        outlives `timeout` seconds. Either way it ends with everything it started.
        """
        process, out = driver
        with out:
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                pass
            finally:
                _stopGroup(process, grace=5)
            out.seek(0)
            text = out.read().decode(errors="replace")
        if process.returncode != 0:
            raise ClusterError(
                f"{process.args[:3]} exited {process.returncode} (timeout {timeout} s):\n"
                f"{text[-8000:]}"
            )
        return text

    def runDriver(
        self, command: list[str], timeout: float, env: dict[str, str] | None = None
    ) -> str:
        """`startDriver` then `awaitDriver`."""
        return self.awaitDriver(self.startDriver(command, env), timeout)

    def stop(self) -> None:
        """End the workers (and their executors), then the master, and remove the directory."""
        workers, self.workers = self.workers, []
        for process in workers:
            _stopGroup(process)
        master, self.master = self.master, None
        if master is not None:
            _stopGroup(master)
        shutil.rmtree(self.directory, ignore_errors=True)
