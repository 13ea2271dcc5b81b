"""``make demo``: a real local Ray cluster, a broken workload, a recorded KubeRay state, one diagnosis.

``python -m bot.demo`` runs it (``--paste`` explains the bundled paste instead). ``local_ray``
starts and always stops the raylets, ``workload`` is the broken driver, ``kuberay_state`` reads the
Kubernetes half (``kuberay_state.json``, written by ``tools/build_demo_state.py``).
"""
