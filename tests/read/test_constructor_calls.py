"""Constructions of pasted classes whose arguments their ``__init__`` cannot take
(``bot.read.constructor_calls``): what is read, what binding says, and where nothing is claimed.

Real snippets: ray-project/ray#21094 (a Serve 1.x deployment deployed without its constructor's
argument), the ``ray.serve.Deployment`` docstring example (``python/ray/serve/deployment.py``,
https://docs.ray.io/en/master/serve/api/doc/ray.serve.Deployment.html: ``bind()`` without the
``name`` its ``__init__`` requires), the ``ray.remote`` docstring example
(https://docs.ray.io/en/latest/ray-core/api/doc/ray.remote.html), ray-project/ray#43273 and #7424,
and an actor created on a real local Ray 2.60 by ``tools/record_constructor_cases.py``.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.collect.paste import parse_paste
from bot.read import constructor_calls, scan
from bot.read.cleaning import clean
from bot.read.found import Found
from bot.snapshot.ray import ConstructorMismatch

CASES = Path(__file__).resolve().parents[1] / "cases"
SERVE = CASES / "serve-constructor-arguments-unbound"
ACTOR = CASES / "ray-actor-constructor-arguments-unbound"


def _mismatches(text: str) -> list[ConstructorMismatch]:
    ray = parse_paste(text).ray
    return ray.constructor_mismatches if ray is not None else []


def _errors(text: str) -> list[str]:
    return [m.error for m in _mismatches(text)]


# --- real snippets --------------------------------------------------------------------------------


def test_serve_1x_deploy_without_the_argument_init_requires() -> None:
    text = (SERVE / "fires" / "ray-21094-serve-deploy-without-constructor-arg.txt").read_text()
    assert _mismatches(text) == [
        ConstructorMismatch(
            kind="deployment",
            class_name="Inner",
            init="def __init__(self, ident: int):",
            call="Inner.deploy()",
            error="missing a required argument: 'ident'",
        )
    ]


def test_serve_bind_without_the_argument_init_requires_in_rays_own_docstring() -> None:
    text = (SERVE / "fires" / "ray-docs-serve-deployment-example-bind-without-name.txt").read_text()
    [mismatch] = _mismatches(text)
    assert (mismatch.class_name, mismatch.call) == ("MyDeployment", "app = MyDeployment.bind()")
    assert mismatch.error == "missing a required argument: 'name'"


def test_the_binding_gives_the_words_ray_raises_at_remote() -> None:
    """Ray binds with ``inspect.Signature`` on the driver: the recorded TypeError has the same words."""
    text = (ACTOR / "fires" / "ray-2-60-actor-created-without-required-arg.txt").read_text()
    [mismatch] = _mismatches(text)
    assert mismatch.kind == "actor"
    assert mismatch.call == "loaders = [Loader.remote(batch_size=64) for _ in range(2)]"
    assert f"TypeError: {mismatch.error}" in text


def test_calls_that_fit_their_init_are_quiet() -> None:
    for path in [*(SERVE / "quiet").glob("*.txt"), *(ACTOR / "quiet").glob("*.txt")]:
        assert _mismatches(path.read_text()) == [], path.name


def test_the_quiet_docstring_is_read_and_binds() -> None:
    """Quiet because its calls bind, not because nothing was read: the classes and calls are there."""
    found = Found()
    text = (ACTOR / "quiet" / "ray-docs-remote-actor-created-with-its-arg.txt").read_text()
    scan.scan(clean(text).lines, found)
    assert {"Foo", "Bar"} <= set(found.code.constructors)
    assert found.code.aliases["RemoteBar"] == ("Bar", "actor")
    assert {(c.target, c.positional) for c in found.code.creations} >= {("Foo", 1), ("RemoteBar", 1)}
    assert constructor_calls.mismatches(found.code) == []


# --- what binding decides ---------------------------------------------------------------------------

ACTOR_CLASS = """
import ray
@ray.remote(num_gpus=1)
class A:
    def __init__(self, x, /, y=1, *, z, **rest):
        pass
"""


def test_binding_follows_pythons_rules_for_every_kind_of_parameter() -> None:
    assert _errors(ACTOR_CLASS + "a = A.remote(1, z=2, anything=3)\n") == []
    assert _errors(ACTOR_CLASS + "a = A.remote(1, 2, z=3)\n") == []
    assert _errors(ACTOR_CLASS + "a = A.remote(1)\n") == ["missing a required argument: 'z'"]
    assert _errors(ACTOR_CLASS + "a = A.remote(z=1)\n") == ["missing a required argument: 'x'"]
    assert _errors(ACTOR_CLASS + "a = A.remote(1, 2, 3, z=4)\n") == ["too many positional arguments"]
    assert _errors(ACTOR_CLASS + "a = A.remote(1, 2, y=3, z=4)\n") == ["multiple values for argument 'y'"]


def test_unknown_keywords_fail_only_without_a_var_keyword_parameter() -> None:
    code = "from ray import serve\n@serve.deployment\nclass D:\n    def __init__(self, model, device='cpu'):\n        pass\n"
    assert _errors(code + "serve.run(D.bind('m', gpu=True))\n") == [
        "got an unexpected keyword argument 'gpu'"
    ]
    assert _errors(code + "serve.run(D.bind('m', device='cuda'))\n") == []
    assert _errors(code + "serve.run(D.options(num_replicas=2).bind())\n") == [
        "missing a required argument: 'model'"
    ]


def test_star_arguments_are_unknown_and_never_judged() -> None:
    assert _errors(ACTOR_CLASS + "a = A.remote(*args)\n") == []
    assert _errors(ACTOR_CLASS + "a = A.remote(1, **options)\n") == []


def test_names_standing_for_a_class_are_followed() -> None:
    code = (
        "import ray\nclass B:\n    def __init__(self, path):\n        pass\nR = ray.remote(num_cpus=1)(B)\n"
    )
    assert _errors(code + "r = R.remote()\n") == ["missing a required argument: 'path'"]
    assert _errors(ACTOR_CLASS + "A2 = A.options(num_gpus=2)\na = A2.remote()\n") == [
        "missing a required argument: 'x'"
    ]
    # A plain class is no actor: ``B.remote()`` without ``ray.remote`` is not this question.
    assert _errors(code.replace("R = ray.remote(num_cpus=1)(B)\n", "") + "b = B.remote()\n") == []


def test_the_class_and_the_call_may_sit_in_different_fences() -> None:
    text = (
        "Here is my deployment:\n```python\nfrom ray import serve\n@serve.deployment\nclass M:\n"
        "    def __init__(self, checkpoint):\n        self.c = checkpoint\n```\n"
        "and this is how I start it, it hangs forever:\n```python\nserve.run(M.bind())\n```\n"
    )
    assert _errors(text) == ["missing a required argument: 'checkpoint'"]


def test_serve_1x_stored_arguments_are_what_deploy_without_arguments_passes() -> None:
    head = "from ray import serve\n@serve.deployment(init_args=(1,))\nclass D:\n    def __init__(self, a, b):\n        pass\n"
    assert _errors(head + "D.deploy()\n") == ["missing a required argument: 'b'"]
    assert _errors(head + "D.deploy(1, 2)\n") == []
    assert _errors(head + "D.options(init_args=(1, 2)).deploy()\n") == []
    assert _errors(head + "D.deploy(1, 2, 3, _blocking=False)\n") == ["too many positional arguments"]
    # Stored arguments beside ``bind()`` depend on the Serve version; a stored value that is no
    # literal is unknown.
    assert _errors(head + "serve.run(D.bind())\n") == []
    assert _errors(head.replace("(1,)", "ARGS") + "D.deploy()\n") == []


def test_nothing_is_claimed_where_the_init_is_not_certain() -> None:
    calls = "x = A.remote()\n"
    for header in (
        "@ray.remote\nclass A(Base):\n    pass\n",  # inherits an __init__ the paste does not show
        "@ray.remote\n@dataclass\nclass A:\n    x: int\n",  # another decorator builds it
        "@ray.remote\nclass A(metaclass=Meta):\n    def __init__(self, x):\n        pass\n",
        "@ray.remote\nclass A:\n    def __new__(cls, *a):\n        pass\n    def __init__(self, x):\n        pass\n",
        "@ray.remote\nclass A:\n    @some_wrapper\n    def __init__(self, x):\n        pass\n",
    ):
        assert _errors("import ray\n" + header + calls) == [], header
    twice = (
        "import ray\n@ray.remote\nclass A:\n    def __init__(self, x):\n        pass\n"
        "@ray.remote\nclass A:\n    def __init__(self):\n        pass\n"
    )
    assert _errors(twice + calls) == [], "two classes of one name: which one runs is unknown"


def test_a_call_the_paste_cut_is_never_judged() -> None:
    assert _errors(ACTOR_CLASS + "a = A.remote(1,\n") == []
    assert _errors(ACTOR_CLASS + "a = A.remote(") == []


# --- hostile input --------------------------------------------------------------------------------

FITTING = """\
import ray
from ray import serve

@ray.remote(num_gpus=1)
class Worker:
    def __init__(
        self,
        rank,
        world_size,
        backend="nccl",
    ):
        self.rank = rank

@serve.deployment(num_replicas=2)
class Ingress:
    def __init__(self, model, *, timeout):
        self.model = model

workers = [Worker.remote(i, 4, backend="gloo") for i in range(4)]
app = Ingress.bind(Worker, timeout=30)
serve.run(app)
"""


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    cut=st.integers(min_value=0, max_value=len(FITTING)),
    junk=st.sampled_from(["", "(", "\n  x = [", "\x00", "  # cut"]),
)
def test_cutting_code_whose_calls_fit_never_makes_one_unfit(cut: int, junk: str) -> None:
    """A prefix of correct code, with or without junk at the cut, never claims a mismatch: a cut
    call or signature is recovered for reading resources, but never judged for its arguments."""
    assert _errors(FITTING[:cut] + junk) == []
