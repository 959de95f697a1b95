"""The environment the end-to-end tests start launchers in: this process's own, without what a
launcher reads as its configuration: torchrun's PET_* and TORCHELASTIC_* variables, and the
Slurm, MPI and Kubernetes variables that cpplaunch's --engine=auto detects. A test run inside an
srun step, under mpirun or in a pod then behaves as on a bare host."""
import os

LAUNCHER_PREFIXES = ("PET_", "TORCHELASTIC_", "SLURM_", "OMPI_", "PMI_", "PMIX_", "MPI_LOCAL",
                     "LWS_", "JOB_COMPLETION_INDEX", "KUBERNETES_")


def clean_env(**extra):
    """os.environ without LAUNCHER_PREFIXES, plus `extra` (which wins)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(LAUNCHER_PREFIXES)}
    env.update(extra)
    return env
