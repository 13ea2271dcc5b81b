"""What pasted Python code declares about resources, kept until the whole paste is read.

The code reader (:mod:`bot.read.python_code`) sees a block of code long before, or long after, the
cluster facts it must be judged against (``ray status``, a node's resources, a RayCluster spec).
So it only records here what the code declares; :func:`bot.read.python_code.settle` joins the two
once the paste has been read. These are plain records with no behaviour, so that
:mod:`bot.read.found` can hold them without importing the reader.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.snapshot.ray import Demand


@dataclass(frozen=True)
class Request:
    """One resource request the code makes: a task, an actor, a placement group, a Serve replica.

    ``shape`` is what Ray reserves for one of them: what the code states, with Ray's own defaults
    for what it leaves out (a task's one CPU, the one CPU an actor naming a resource holds; see
    ``python_code.with_defaults``). ``instances`` is how many the code
    creates when literal loops say so; ``None`` when it creates some, how many is not known; 0 when
    it is only declared (a decorator whose ``.remote()`` the paste does not show).
    """

    kind: str  # task | actor | placement_group
    shape: dict[str, float]
    quote: str
    bundles: tuple[dict[str, float], ...] = ()
    strategy: str | None = None
    name: str | None = None
    instances: int | None = 0
    # Where it was read: Python code or a Serve config (the evidence says which).
    source: str = "python code"


@dataclass(frozen=True)
class LocalNode:
    """``ray.init(num_cpus=…, num_gpus=…, resources=…)`` without an address: the driver starts a
    one-node cluster holding what it declares; what it leaves out Ray detects, so it is unknown."""

    resources: dict[str, float]
    quote: str


@dataclass(frozen=True)
class Template:
    """A remote function, actor class or Serve deployment the code declares, by name; ``shape`` is
    None when one of its values is unknown."""

    kind: str
    shape: dict[str, float] | None
    quote: str


@dataclass(frozen=True)
class Constructor:
    """A pasted class's own ``__init__``: what it accepts, read from its ``def`` line.

    ``parameters`` are ``(name, kind, has_default)`` without ``self``, ``kind`` named as
    :class:`inspect.Parameter` names it (``POSITIONAL_ONLY``, ``POSITIONAL_OR_KEYWORD``,
    ``VAR_POSITIONAL``, ``KEYWORD_ONLY``, ``VAR_KEYWORD``); None when what the class accepts is not
    certain from the paste (no own ``__init__``, a ``__new__``, a metaclass, a decorator that may
    wrap it). ``kind`` is ``actor`` (``@ray.remote``), ``deployment`` (``@serve.deployment``) or
    ``class``. ``stored_args``/``stored_kwargs``: Serve 1.x's ``init_args``/``init_kwargs`` given to
    the decorator (a count, names), which ``deploy()`` without arguments passes; ``stored_unknown``
    when one is given as no literal.
    """

    name: str
    kind: str
    parameters: tuple[tuple[str, str, bool], ...] | None
    init_quote: str
    quote: str
    stored_args: int | None = None
    stored_kwargs: tuple[str, ...] | None = None
    stored_unknown: bool = False


@dataclass(frozen=True)
class Creation:
    """``X.remote(...)``, ``X.bind(...)`` or ``X.deploy(...)`` (through ``.options(...)`` or not):
    the arguments it passes to X's constructor, as a count and names. ``positional`` is None for a
    ``*args``, ``keywords`` None for a ``**kwargs`` (what they hold is unknown). ``stored_*``: Serve
    1.x's ``.options(init_args=..., init_kwargs=...)`` on the way, as in :class:`Constructor`."""

    target: str
    api: str  # remote | bind | deploy
    positional: int | None
    keywords: tuple[str, ...] | None
    quote: str
    stores: bool = False
    stored_args: int | None = None
    stored_kwargs: tuple[str, ...] | None = None
    stored_unknown: bool = False


@dataclass
class CodeFacts:
    requests: list[Request] = field(default_factory=list)
    # What earlier blocks of the same paste declared: a class in one fence, ``.remote()`` in the next.
    templates: dict[str, Template] = field(default_factory=dict)
    constants: dict[str, object] = field(default_factory=dict)
    local_node: LocalNode | None = None
    # ``ray.init(address=...)``: the code joins a running cluster, so no local node is declared.
    joins_cluster: bool = False
    # ``ray.init()`` without an address: the code starts a one-node cluster on the machine it runs
    # on, whose GPUs Ray detects (what ``nvidia-smi`` on that machine lists).
    starts_local: bool = False
    init_quote: str = ""
    # The code touches CUDA (``torch.cuda``, ``.cuda()``, a ``"cuda"`` device): it expects a GPU.
    uses_cuda: bool = False
    # Arguments the code passes as names or expressions the paste does not resolve.
    unknown: list[str] = field(default_factory=list)
    # The requests as demands, once joined with a pasted cluster (``settle``).
    declared: list[Demand] = field(default_factory=list)
    # Classes with their own ``__init__``, by name (None: defined twice, differently), the names
    # that stand for them (``A = ray.remote(B)``: A → (B, "actor"); ``A2 = A.options(...)``: A2 →
    # (A, "")), and the calls that construct them: joined once the paste is read
    # (:mod:`bot.read.constructor_calls`), since a class and its call may sit in different fences.
    constructors: dict[str, Constructor | None] = field(default_factory=dict)
    aliases: dict[str, tuple[str, str]] = field(default_factory=dict)
    creations: list[Creation] = field(default_factory=list)
    # Characters parsed so far in this paste: the parse budget is per paste, not per block.
    chars_parsed: int = 0
    settled: bool = False
