"""The environment a GPU job gets, on top of the panel's own.

In order, later winning: the managed environment's own variables (e.g. the
HSA_OVERRIDE_GFX_VERSION its build needs on this GPU), the session store (what the user
set for the panel's jobs), then the job's own ``JobSpec.env``.
"""

from __future__ import annotations

import dataclasses

from rocmpanel.envvars.stores.session import job_env_overrides
from rocmpanel.jobs import workload
from rocmpanel.jobs.spec import JobSpec


def job_env_for(spec: JobSpec) -> dict[str, str | None]:
    """The env overrides ``spec`` should run with. PanelError if the session file is bad."""
    env: dict[str, str | None] = {}
    managed = workload.env_for_python(spec.python) if spec.python else None
    if managed is not None:
        env.update(managed.job_env)
    env.update(job_env_overrides())
    env.update(spec.env)
    return env


def with_job_env(spec: JobSpec) -> JobSpec:
    """``spec`` with :func:`job_env_for` applied (for launchers outside the JobManager)."""
    return dataclasses.replace(spec, env=job_env_for(spec))
