"""Filling rule templates: a fact the finding lacks reads as a word in prose, a slot in a command."""

from __future__ import annotations

from bot.render.template import fill


def test_unknown_fact_in_prose_is_a_word_and_in_a_quoted_command_a_slot() -> None:
    template = "Free the GPUs on {node} (`kubectl describe node {node}`, section Allocated resources)."
    assert fill(template, {}, "(unknown)") == (
        "Free the GPUs on (unknown) (`kubectl describe node <node>`, section Allocated resources)."
    )
    assert fill(template, {"node": "gpu-1"}, "(unknown)") == (
        "Free the GPUs on gpu-1 (`kubectl describe node gpu-1`, section Allocated resources)."
    )


def test_commands_keep_their_slots_and_escaped_braces() -> None:
    command = "kubectl get pod {pod} -n {namespace} -o jsonpath='{{.spec.nodeName}}'"
    assert (
        fill(command, {"pod": "w-1"}) == "kubectl get pod w-1 -n <namespace> -o jsonpath='{.spec.nodeName}'"
    )


def test_unbalanced_backticks_are_filled_as_prose() -> None:
    assert fill("run `ray status on {node}", {}, "?") == "run `ray status on ?"
