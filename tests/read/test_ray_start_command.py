"""``ray start`` command lines as pasted (``bot/read/ray_start_command.py``): real lines from
ray-project/ray#5796 and #15114 and Ray's accelerator docs."""

from __future__ import annotations

from pathlib import Path

from bot.collect.paste import parse_paste
from bot.read.ray_start_command import parse

FOUR_RAYLETS = (
    Path(__file__).resolve().parents[1]
    / "corpus"
    / "found-heldout6"
    / "ray-5796-four-raylets-on-one-machine-all-use-first-gpu.txt"
)


def test_head_and_loopback_workers_with_their_gpus() -> None:
    ray = parse_paste(FOUR_RAYLETS.read_text()).ray
    assert ray is not None
    commands = ray.start_commands
    assert [c.head for c in commands] == [True, False, False, False]
    assert {c.address for c in commands[1:]} == {"127.0.0.1:6379"}
    assert [c.num_gpus for c in commands] == [1.0] * 4
    assert all(c.visible_devices is None for c in commands)


def test_devices_set_before_the_command_on_its_line() -> None:
    command = parse(
        "CUDA_VISIBLE_DEVICES=1,3 ray start --head --num-gpus=2 lets Ray only see devices 1 and 3."
    )
    assert command is not None
    assert (command.head, command.num_gpus, command.visible_devices) == (True, 2.0, "1,3")


def test_a_command_without_flags_declares_nothing() -> None:
    command = parse("CUDA_VISIBLE_DEVICES=1 ray start should work for you.")
    assert command is not None
    assert (command.head, command.address, command.num_gpus) == (False, None, None)


def test_a_line_the_shell_cannot_split_is_no_command() -> None:
    assert parse('ray start --head --resources=\'{"GPU": 1}') is None
