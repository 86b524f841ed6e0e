"""Where experiment runs execute: a concurrent.futures executor.

    local            processes on this machine, one per core (default)
    dask:local       a Dask distributed LocalCluster started for this build
    dask:tcp://HOST:PORT, dask:tls://HOST:PORT
                     an existing Dask scheduler, e.g. dask:tcp://10.0.0.5:8786; its workers are trusted
                     with the reports (--check runs here: pipeline.run_experiments)

Each job starts its own process (see experiments.run_job), so the local executor's
threads only wait for them. Dask needs the optional `distributed` package.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager

from lessonkit.errors import BuildError
from lessonkit.processes import cores

CONNECT = 10.0  # seconds a scheduler has to answer, unless Dask's configuration sets distributed.comm.timeouts.connect
ANSWER = 5.0  # seconds more for a service that accepts the connection and says nothing (Dask waits for ever)


def connect_timeout() -> float:
    """distributed.comm.timeouts.connect where the user's Dask configuration (a file, DASK_* variables) sets
    it; else CONNECT, shorter than Dask's own default: a build should not wait half a minute to say so."""
    import dask
    from dask.utils import parse_timedelta

    key = "distributed.comm.timeouts.connect"
    shipped = dask.config.get(key, config=dask.config.merge(*dask.config.defaults), default=None)
    chosen = dask.config.get(key, default=None)
    return CONNECT if chosen is None or chosen == shipped else float(parse_timedelta(chosen, default="s"))


def dask_address(spec: str) -> str:
    """The Dask address of `dask:local`, `dask:tcp://HOST:PORT` or `dask:tls://HOST:PORT`, or a one-line error."""
    from urllib.parse import urlsplit

    where = spec.removeprefix("dask:")
    if where == "local":
        return where
    if spec.startswith("dask:") and "://" not in where:  # dask:HOST:PORT, as Dask itself reads it: tcp
        where = f"tcp://{where}"
    try:
        parts = urlsplit(where)
        port = parts.port
    except ValueError:
        port, parts = None, None
    if not spec.startswith("dask:") or parts is None or parts.scheme not in ("tcp", "tls") or not parts.hostname \
            or port is None or parts.path or parts.query or parts.fragment or parts.username:
        raise BuildError(f"--executor {spec!r}: expected local, dask:local, dask:tcp://HOST:PORT or "
                         f"dask:tls://HOST:PORT")
    return where


def _within(seconds: float, spec: str, what: str, call):
    """call(), or a one-line error when it has not returned after `seconds`: Dask waits for ever on a peer that
    accepts a connection and then says nothing. (The thread left waiting dies with the build.)"""
    import threading

    done: dict = {}

    def run():
        try:
            done["value"] = call()
        except BaseException as exc:  # handed to the caller's thread
            done["error"] = exc

    thread = threading.Thread(target=run, daemon=True, name="dask-connect")
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise BuildError(f"--executor {spec}: {what} within {seconds:g} s (is a Dask scheduler listening there?)")
    if "error" in done:
        raise done["error"]
    return done["value"]


@contextmanager
def executor(spec: str = "local", jobs: int | None = None) -> Iterator[tuple[object, int]]:
    """(executor, number of workers) for the given --executor spec."""
    if spec == "local":
        workers = jobs or cores()
        from concurrent.futures import ThreadPoolExecutor

        from lessonkit.measure import sandbox

        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="experiment")
        try:
            yield pool, workers
        except BaseException:  # an error or an interrupt: the runs still under way are not waited for
            sandbox.stop_all()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        return
    address = dask_address(spec)
    try:
        import cloudpickle
        from distributed import Client, LocalCluster
    except ImportError:
        raise BuildError(f"--executor {spec}: needs the 'distributed' package (pip install distributed)") from None
    from lessonkit.measure import experiments, sandbox

    # Workers get the job function by value: they need Python and numpy, not lessonkit.
    for module in (experiments, sandbox):
        cloudpickle.register_pickle_by_value(module)
    cluster, quiet = None, contextlib.nullcontext()
    try:
        if address == "local":
            # The build's own cluster: on loopback, over TLS with credentials made for this build alone (another
            # process on the machine cannot hand it tasks), and its HTTP servers serve nothing (no dashboard).
            import dask
            from distributed.security import Security

            security = Security.temporary()
            quiet = dask.config.set({"distributed.scheduler.http.routes": [], "distributed.worker.http.routes": []})
            quiet.__enter__()
            import logging

            # Dask's own log lines (a cancelled task, a worker killed on shutdown) are not the build's to print.
            logging.getLogger("distributed").setLevel(logging.CRITICAL)
            cluster = LocalCluster(n_workers=jobs or cores(), threads_per_worker=1, processes=True, host="127.0.0.1",
                                   protocol="tls", security=security, dashboard_address="127.0.0.1:0",
                                   silence_logs=logging.CRITICAL)
            client = Client(cluster, security=security)
        else:
            # tls:// takes its credentials from Dask's configuration (distributed.comm.tls.*), as `dask` does.
            wait = connect_timeout()
            client = _within(wait + ANSWER, spec, "the scheduler did not answer",
                             lambda: Client(address, timeout=wait))
    except OSError as exc:
        raise BuildError(f"--executor {spec}: cannot reach the Dask scheduler ({exc})") from None
    except (ValueError, TypeError, ImportError) as exc:  # Dask's own refusal of an address or of credentials
        raise BuildError(f"--executor {spec}: Dask cannot connect there ({type(exc).__name__}: {exc})") from None
    try:
        if address != "local":
            _same_versions(client, spec)
        workers = sum(client.nthreads().values()) or 1
        yield client.get_executor(pure=False), workers
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
        quiet.__exit__(None, None, None)
        for module in (experiments, sandbox):
            cloudpickle.unregister_pickle_by_value(module)


def _same_versions(client, spec: str) -> None:
    """Workers must measure with this build's Python (minor version) and numpy: the cache and the frozen results
    are keyed by the build's versions, so a worker with others would file its values under the wrong name."""
    import platform

    from lessonkit.measure.experiments import worker_versions
    from lessonkit.versions import package_version

    here = {"python": ".".join(platform.python_version_tuple()[:2]), "numpy": package_version("numpy")}
    try:
        found = _within(connect_timeout() + ANSWER, spec, "the workers did not report their versions",
                        lambda: client.run(worker_versions))
    except BuildError:
        raise
    except Exception as exc:  # a worker that cannot even import numpy
        raise BuildError(f"--executor {spec}: a worker cannot report its versions ({type(exc).__name__}: {exc})") \
            from None
    if not found:
        raise BuildError(f"--executor {spec}: the scheduler has no workers")
    for worker, theirs in sorted(found.items()):
        for name in ("python", "numpy"):
            if theirs.get(name) != here[name]:
                raise BuildError(f"--executor {spec}: worker {worker} has {name} {theirs.get(name)}, this build "
                                 f"{here[name]}: results are keyed by the build's versions; give the workers the same")
