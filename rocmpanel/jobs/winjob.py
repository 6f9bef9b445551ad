"""Windows: each worker and everything it starts in one Job object, so cancel ends them all.

Signals do not end a process tree on Windows: ``CTRL_BREAK_EVENT`` reaches only processes
that share the caller's console (a ``CREATE_NO_WINDOW`` worker has its own, a panel run by
``pythonw.exe`` has none), and ``os.kill`` raises ``SystemError`` there on many Pythons
(https://github.com/python/cpython/issues/58689, https://github.com/python/cpython/issues/87128).
A Job object does: every process the worker starts joins the job, ``TerminateJobObject``
ends them all at once, and with ``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`` the kernel ends them
when the last handle to the job closes, which happens when the panel exits however it
exits (Task Manager included), since the handle is not inheritable.
(https://learn.microsoft.com/windows/win32/procthread/job-objects)

The worker starts suspended (``CREATE_SUSPENDED``) so that nothing it starts can be born
before it is in the job; it is assigned, then resumed. When assigning fails (a panel inside
a job that forbids nesting fails with ERROR_ACCESS_DENIED, see
https://learn.microsoft.com/windows/win32/api/jobapi2/nf-jobapi2-assignprocesstojobobject)
the worker still runs, and cancel falls back to ``taskkill /T /F`` of its tree, at once,
while the worker (the root of that tree) is alive.

:class:`JobApi` is the seam: :class:`Kernel32JobApi` makes the few kernel32 calls (built
only on Windows); tests pass a fake. :class:`ProcessTree` holds the logic.
"""

from __future__ import annotations

import ctypes
import logging
import sys
import threading
from typing import Any, Protocol

from rocmpanel.base import subproc

log = logging.getLogger(__name__)

# Process creation flag: the primary thread starts suspended (winbase.h; documented under
# "Process Creation Flags": https://learn.microsoft.com/windows/win32/procthread/process-creation-flags).
CREATE_SUSPENDED = 0x00000004
# winnt.h: end every process in the job when its last handle is closed.
JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x00002000
# JOBOBJECTINFOCLASS value for JOBOBJECT_EXTENDED_LIMIT_INFORMATION
# (https://learn.microsoft.com/windows/win32/api/jobapi2/nf-jobapi2-setinformationjobobject).
JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS = 9
# CreateToolhelp32Snapshot: every thread in the system
# (https://learn.microsoft.com/windows/win32/api/tlhelp32/nf-tlhelp32-createtoolhelp32snapshot).
TH32CS_SNAPTHREAD = 0x00000004
# The access right ResumeThread needs (Thread Security and Access Rights).
THREAD_SUSPEND_RESUME = 0x0002
ERROR_NO_MORE_FILES = 18
# The exit code TerminateJobObject gives each process (Popen.terminate uses 1 as well).
TERMINATED_EXIT_CODE = 1
# taskkill normally returns within a second; it must not hold cancel for long.
TASKKILL_TIMEOUT_S = 10.0


# -- the structures, with fixed-size integers so their layout is the same on every OS -----
# DWORD is 32 bits on Windows, but ctypes.wintypes.DWORD is a C long (64 bits on Linux), so
# the fields use c_uint32/c_int32; SIZE_T and ULONG_PTR are pointer-sized (c_size_t).
class IO_COUNTERS(ctypes.Structure):
    """winnt.h IO_COUNTERS: six ULONGLONG counters (48 bytes)."""

    _fields_ = [
        ("ReadOperationCount", ctypes.c_uint64),
        ("WriteOperationCount", ctypes.c_uint64),
        ("OtherOperationCount", ctypes.c_uint64),
        ("ReadTransferCount", ctypes.c_uint64),
        ("WriteTransferCount", ctypes.c_uint64),
        ("OtherTransferCount", ctypes.c_uint64),
    ]


class JOBOBJECT_BASIC_LIMIT_INFORMATION(ctypes.Structure):
    """Field order of
    https://learn.microsoft.com/windows/win32/api/winnt/ns-winnt-jobobject_basic_limit_information
    (64 bytes on 64-bit Windows)."""

    _fields_ = [
        ("PerProcessUserTimeLimit", ctypes.c_int64),  # LARGE_INTEGER
        ("PerJobUserTimeLimit", ctypes.c_int64),  # LARGE_INTEGER
        ("LimitFlags", ctypes.c_uint32),  # DWORD
        ("MinimumWorkingSetSize", ctypes.c_size_t),  # SIZE_T
        ("MaximumWorkingSetSize", ctypes.c_size_t),  # SIZE_T
        ("ActiveProcessLimit", ctypes.c_uint32),  # DWORD
        ("Affinity", ctypes.c_size_t),  # ULONG_PTR
        ("PriorityClass", ctypes.c_uint32),  # DWORD
        ("SchedulingClass", ctypes.c_uint32),  # DWORD
    ]


class JOBOBJECT_EXTENDED_LIMIT_INFORMATION(ctypes.Structure):
    """Field order of
    https://learn.microsoft.com/windows/win32/api/winnt/ns-winnt-jobobject_extended_limit_information
    (144 bytes on 64-bit Windows)."""

    _fields_ = [
        ("BasicLimitInformation", JOBOBJECT_BASIC_LIMIT_INFORMATION),
        ("IoInfo", IO_COUNTERS),
        ("ProcessMemoryLimit", ctypes.c_size_t),
        ("JobMemoryLimit", ctypes.c_size_t),
        ("PeakProcessMemoryUsed", ctypes.c_size_t),
        ("PeakJobMemoryUsed", ctypes.c_size_t),
    ]


class THREADENTRY32(ctypes.Structure):
    """Field order of https://learn.microsoft.com/windows/win32/api/tlhelp32/ns-tlhelp32-threadentry32
    (28 bytes)."""

    _fields_ = [
        ("dwSize", ctypes.c_uint32),
        ("cntUsage", ctypes.c_uint32),
        ("th32ThreadID", ctypes.c_uint32),
        ("th32OwnerProcessID", ctypes.c_uint32),
        ("tpBasePri", ctypes.c_int32),
        ("tpDeltaPri", ctypes.c_int32),
        ("dwFlags", ctypes.c_uint32),
    ]


def kill_on_close_limits() -> JOBOBJECT_EXTENDED_LIMIT_INFORMATION:
    """The limits every worker's job gets: only KILL_ON_JOB_CLOSE."""
    info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION()
    info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
    return info


class JobApi(Protocol):
    """The Job-object calls the panel makes. Each raises OSError when Windows refuses."""

    def create_job(self) -> int:
        """A new job object (a handle) with ``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`` set."""
        ...

    def assign(self, job: int, process: int) -> None:
        """Put the process (a handle) into the job."""
        ...

    def resume(self, pid: int) -> int:
        """Resume the threads of process ``pid`` (started suspended); how many."""
        ...

    def terminate(self, job: int, exit_code: int) -> None:
        """End every process in the job."""
        ...

    def close(self, handle: int) -> None:
        """Close a handle."""
        ...


class Kernel32JobApi:
    """:class:`JobApi` through kernel32 with ctypes. Windows only: built by
    :func:`real_job_api`, never at import time."""

    def __init__(self) -> None:
        from ctypes import wintypes

        # WinDLL, WinError and get_last_error exist only on Windows (hence getattr).
        kernel32 = getattr(ctypes, "WinDLL")("kernel32", use_last_error=True)  # noqa: B009
        self._win_error = getattr(ctypes, "WinError")  # noqa: B009
        self._last_error = getattr(ctypes, "get_last_error")  # noqa: B009
        handle, boolean, dword = wintypes.HANDLE, wintypes.BOOL, ctypes.c_uint32
        signatures: dict[str, tuple[list[Any], Any]] = {
            "CreateJobObjectW": ([ctypes.c_void_p, wintypes.LPCWSTR], handle),
            "SetInformationJobObject": ([handle, ctypes.c_int, ctypes.c_void_p, dword], boolean),
            "AssignProcessToJobObject": ([handle, handle], boolean),
            "TerminateJobObject": ([handle, ctypes.c_uint], boolean),
            "CloseHandle": ([handle], boolean),
            "CreateToolhelp32Snapshot": ([dword, dword], handle),
            "Thread32First": ([handle, ctypes.POINTER(THREADENTRY32)], boolean),
            "Thread32Next": ([handle, ctypes.POINTER(THREADENTRY32)], boolean),
            "OpenThread": ([dword, boolean, dword], handle),
            "ResumeThread": ([handle], dword),
        }
        for name, (argtypes, restype) in signatures.items():
            function = getattr(kernel32, name)
            function.argtypes = argtypes
            function.restype = restype
        self._k = kernel32
        self._invalid_handle = ctypes.c_void_p(-1).value

    def _error(self) -> OSError:
        error: OSError = self._win_error(self._last_error())
        return error

    def create_job(self) -> int:
        job = self._k.CreateJobObjectW(None, None)  # not inheritable, no name
        if not job:
            raise self._error()
        info = kill_on_close_limits()
        if not self._k.SetInformationJobObject(
            job,
            JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS,
            ctypes.byref(info),
            ctypes.sizeof(info),
        ):
            error = self._error()
            self._k.CloseHandle(job)
            raise error
        return int(job)

    def assign(self, job: int, process: int) -> None:
        if not self._k.AssignProcessToJobObject(job, process):
            raise self._error()

    def resume(self, pid: int) -> int:
        # Popen closes the primary thread's handle, so the threads are found by a snapshot
        # and opened by id (ResumeThread returns (DWORD)-1 on failure).
        snapshot = self._k.CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0)
        if not snapshot or snapshot == self._invalid_handle:
            raise self._error()
        resumed = 0
        try:
            entry = THREADENTRY32()
            entry.dwSize = ctypes.sizeof(THREADENTRY32)
            more = self._k.Thread32First(snapshot, ctypes.byref(entry))
            while more:
                if entry.th32OwnerProcessID == pid:
                    thread = self._k.OpenThread(THREAD_SUSPEND_RESUME, False, entry.th32ThreadID)
                    if not thread:
                        raise self._error()
                    try:
                        if self._k.ResumeThread(thread) == 0xFFFFFFFF:
                            raise self._error()
                        resumed += 1
                    finally:
                        self._k.CloseHandle(thread)
                more = self._k.Thread32Next(snapshot, ctypes.byref(entry))
            if self._last_error() not in (0, ERROR_NO_MORE_FILES):
                raise self._error()
        finally:
            self._k.CloseHandle(snapshot)
        if resumed == 0:
            raise OSError(f"no thread of process {pid} was found to resume")
        return resumed

    def terminate(self, job: int, exit_code: int) -> None:
        if not self._k.TerminateJobObject(job, exit_code):
            raise self._error()

    def close(self, handle: int) -> None:
        if not self._k.CloseHandle(handle):
            raise self._error()


_real_lock = threading.Lock()
_real: list[JobApi | None] = []


def real_job_api(platform: str = sys.platform) -> JobApi | None:
    """The kernel32 :class:`JobApi` on Windows (made once), None elsewhere or when it
    cannot be loaded (then cancel uses taskkill)."""
    if platform != "win32":
        return None
    with _real_lock:
        if not _real:
            try:
                _real.append(Kernel32JobApi())
            except Exception as exc:  # an odd Python without ctypes.WinDLL: taskkill then
                log.warning("Job objects are not available (%s); cancel will use taskkill", exc)
                _real.append(None)
        return _real[0]


class ProcessTree:
    """One worker's process tree on Windows: in a job object when it can be, or ended by
    ``taskkill /T /F`` otherwise. Nothing here raises but :meth:`adopt`."""

    def __init__(self, api: JobApi | None, platform: str = "win32") -> None:
        self._api = api
        self._platform = platform
        self._lock = threading.Lock()
        self._job: int | None = None
        self._pid: int | None = None
        # Why cancel ends this tree with taskkill (None while the job object holds it).
        self.fallback_reason: str | None = None if api is not None else "no Job-object API"

    @property
    def in_job(self) -> bool:
        return self._job is not None and self._pid is not None

    def creation_flags(self) -> int:
        """Create the job; the flags to start the worker with: ``CREATE_SUSPENDED`` when
        there is a job to put it in (``CREATE_NO_WINDOW`` comes from base.subproc)."""
        if self._api is None:
            return 0
        try:
            self._job = self._api.create_job()
        except Exception as exc:
            self.fallback_reason = f"creating a job object failed: {exc}"
            log.warning("%s; cancel will use taskkill /T /F", self.fallback_reason)
            return 0
        return CREATE_SUSPENDED

    def adopt(self, process: int, pid: int) -> None:
        """Put the worker (started with :meth:`creation_flags`) into the job, then let it
        run. When it cannot join, it runs outside any job (cancel uses taskkill). Raises
        OSError only when a suspended worker cannot be resumed."""
        self._pid = pid
        if self._job is None or self._api is None:
            return  # started running: there is nothing to resume
        try:
            self._api.assign(self._job, process)
        except Exception as exc:
            # ERROR_ACCESS_DENIED: the panel runs inside a job that allows no nested job.
            self.fallback_reason = f"putting the worker into a job object failed: {exc}"
            log.warning("%s; cancel will use taskkill /T /F", self.fallback_reason)
            self.close()
        self._api.resume(pid)

    def end(self) -> bool:
        """End the whole tree now (the job, or taskkill of the tree); whether that worked.
        Never raises."""
        with self._lock:
            job, api = self._job, self._api
        if job is not None and api is not None and self._pid is not None:
            try:
                api.terminate(job, TERMINATED_EXIT_CODE)
                return True
            except Exception as exc:
                log.warning("ending the job object failed (%s); trying taskkill /T /F", exc)
        return self._taskkill()

    def _taskkill(self) -> bool:
        if self._pid is None:
            return False
        argv = ["taskkill", "/T", "/F", "/PID", str(self._pid)]
        try:
            done = subproc.run(
                argv,
                platform=self._platform,
                capture_output=True,
                check=False,
                timeout=TASKKILL_TIMEOUT_S,
            )
        except Exception as exc:  # taskkill missing, or it hung
            log.warning("taskkill of process tree %s failed: %s", self._pid, exc)
            return False
        if done.returncode != 0:
            log.warning(
                "taskkill of process tree %s exited %s: %s",
                self._pid,
                done.returncode,
                (done.stderr or b"").decode("utf-8", "replace").strip(),
            )
        return bool(done.returncode == 0)

    def close(self) -> None:
        """Close the job handle, once. With KILL_ON_JOB_CLOSE the kernel ends whatever the
        worker left running in it. Never raises."""
        with self._lock:
            job, self._job = self._job, None
        if job is None or self._api is None:
            return
        try:
            self._api.close(job)
        except Exception as exc:
            log.warning("closing a job object failed: %s", exc)
