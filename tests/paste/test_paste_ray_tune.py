"""Ray Tune's and Train's status output of every era, and the per-trial requests in pasted code.

The texts are what users pasted in public Ray threads (ray-project/ray#17674, #18332, #3389,
#29940, #23395, interTwin-eu/itwinai#385) and the example lines in Tune's own output engine.
"""

from __future__ import annotations

from bot.catalogue import default_catalogue
from bot.classify import classify
from bot.collect.paste import parse_paste

ONE_PENDING_0_7_LAYOUT = """\
== Status ==
Memory usage on this node: 6.2/7.9 GiB
Using FIFO scheduling algorithm.
Resources requested: 0/4 CPUs, 0/0 GPUs, 0.0/1.35 GiB heap, 0.0/0.67 GiB objects
Result logdir: C:\\Users\\rick\\ray_results\\trade4
Number of trials: 1/1 (1 PENDING)
+---------------------------------+----------+-------+
| Trial name                      | status   | loc   |
|---------------------------------+----------+-------|
| PPO_SimpleTradeEnv4_10ba4_00000 | PENDING  |       |
+---------------------------------+----------+-------+
"""

QUEUED_WITH_ERROR = """\
Resources requested: 4.0/4 CPUs, 0/0 GPUs, 0.0/4.09 GiB heap, 0.0/2.04 GiB objects
Number of trials: 10/10 (1 ERROR, 8 PENDING, 1 RUNNING)
| train_eye_878b2_00001 | RUNNING  |       |            4 |   84 |   42 | 0.00334571  |
| train_eye_878b2_00002 | PENDING  |       |           64 |   84 |   42 | 0.000907996 |
"""

OLD_SECTIONS = """\
== Status ==
Using AsyncHyperBand: num_stopped=0
Resources requested: 10/10 CPUs, 2/2 GPUs
PENDING trials:
 - train_model_tune_2_e=204800,t=0.4,1=224:\tPENDING
 - train_model_tune_3_e=102400,t=0.6,1=416:\tPENDING
RUNNING trials:
 - train_model
"""

NEW_ENGINE = """\
Trial status: 1 RUNNING | 7 PENDING
Logical resource usage: 8.0/64 CPUs, 0/0 GPUs
"""

BOX_TABLE_RUNNING = """\
Logical resource usage: 2.0/32 CPUs, 0/8 GPUs (0.0/2.0 accelerator_type:A100)
│ Trial name                    status       iter     total time (s)       loss │
│ train_driver_fn_c7dda_00000   RUNNING         1            62.3172   0.809105 │
│ train_driver_fn_c7dda_00001   RUNNING         1            63.3747   0.836909 │
"""

SCALING_CONFIG = """\
scaling_config=ScalingConfig(num_workers=8, use_gpu=True)

== Status ==
Resources requested: 0/20 CPUs, 0/1 GPUs, 0.0/12.14 GiB heap, 0.0/6.07 GiB objects (0.0/1.0 accelerator_type:G)
Number of trials: 1/1 (1 PENDING)
| TorchTrainer_c40be_00000 | PENDING  |       |
"""


def _rules(text: str) -> list[str]:
    return [f.rule for f in classify(parse_paste(text), default_catalogue()).findings]


def test_summary_line_counts_every_trial() -> None:
    tune = parse_paste(QUEUED_WITH_ERROR).ray.tune  # type: ignore[union-attr]
    assert tune is not None
    assert tune.counts == {"ERROR": 1, "PENDING": 8, "RUNNING": 1}
    assert tune.quotes[-1] == "Number of trials: 10/10 (1 ERROR, 8 PENDING, 1 RUNNING)"


def test_old_sections_count_a_cut_running_list_as_one_running_trial() -> None:
    tune = parse_paste(OLD_SECTIONS).ray.tune  # type: ignore[union-attr]
    assert tune is not None
    assert tune.pending == 2 and tune.running == 1
    assert "Resources requested: 10/10 CPUs, 2/2 GPUs" in tune.quotes


def test_output_engine_summary_and_box_rows() -> None:
    tune = parse_paste(NEW_ENGINE).ray.tune  # type: ignore[union-attr]
    assert tune is not None and tune.counts == {"RUNNING": 1, "PENDING": 7}
    boxed = parse_paste(BOX_TABLE_RUNNING).ray.tune  # type: ignore[union-attr]
    assert boxed is not None and boxed.counts == {"RUNNING": 2}


def test_trials_behind_running_trials_are_queued_not_impossible() -> None:
    assert _rules(QUEUED_WITH_ERROR) == ["ray-tune-trials-queued"]
    assert _rules(OLD_SECTIONS) == ["ray-tune-trials-queued"]


def test_a_lone_pending_trial_never_starts() -> None:
    assert _rules(ONE_PENDING_0_7_LAYOUT) == ["ray-tune-trials-never-start"]


def test_running_trials_alone_say_nothing() -> None:
    assert _rules(BOX_TABLE_RUNNING) == []


def test_scaling_config_reserves_one_bundle_per_worker() -> None:
    ray = parse_paste(SCALING_CONFIG).ray
    assert ray is not None
    [demand] = ray.demands
    assert demand.kind == "placement_group" and demand.strategy == "PACK"
    assert demand.bundles == [{"GPU": 1.0}] * 8
    assert demand.source_text == "scaling_config=ScalingConfig(num_workers=8, use_gpu=True)"
    assert _rules(SCALING_CONFIG) == ["ray-group-exceeds-cluster"]


def test_scaling_config_over_several_lines_and_resources_per_worker() -> None:
    text = (
        "trainer = TorchTrainer(\n"
        "    train_func,\n"
        '    scaling_config=ScalingConfig(num_workers=3, use_gpu=True, resources_per_worker={"GPU": 2, "CPU": 4},\n'
        '        placement_strategy="STRICT_SPREAD"),\n'
        ")\n"
        "Number of trials: 1/1 (1 PENDING)\n"
    )
    [demand] = parse_paste(text).ray.demands  # type: ignore[union-attr]
    assert demand.bundles == [{"GPU": 2.0, "CPU": 4.0}] * 3
    assert demand.strategy == "STRICT_SPREAD"


def test_train_1x_trainer_keywords() -> None:
    text = (
        'trainer = Trainer(backend="torch", num_workers=2, use_gpu=True)\n'
        "Resources requested: 0/12 CPUs, 0/1 GPUs\n"
        "Number of trials: 1 (1 PENDING)\n"
    )
    [demand] = parse_paste(text).ray.demands  # type: ignore[union-attr]
    assert demand.bundles == [{"GPU": 1.0}] * 2
    assert _rules(text) == ["ray-group-exceeds-cluster"]


def test_per_trial_resources_fit_the_cluster_and_wait_behind_running_trials() -> None:
    text = (
        ' tuner = tune.Tuner(\n        tune.with_resources(easy_objective, {"cpu": 1, "gpu": 1}),\n'
        "Resources requested: 1.0/8 CPUs, 1.0/1 GPUs\n"
        "Number of trials: 18/100 (17 PENDING, 1 RUNNING)\n"
    )
    ray = parse_paste(text).ray
    assert ray is not None
    assert [d.bundles for d in ray.demands] == [[{"CPU": 1.0, "GPU": 1.0}]]
    rules = _rules(text)
    assert "ray-tune-trials-queued" in rules
    assert not {"ray-group-exceeds-cluster", "ray-demand-infeasible"} & set(rules)


def test_code_without_waiting_trials_is_no_demand() -> None:
    text = "scaling_config=ScalingConfig(num_workers=8, use_gpu=True)\nNumber of trials: 1/1 (1 RUNNING)\n"
    ray = parse_paste(text).ray
    assert ray is not None and not ray.demands
    code_only = parse_paste("scaling_config=ScalingConfig(num_workers=8, use_gpu=True)\n")
    assert code_only.ray is None
