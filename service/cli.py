"""The ``fitcheck`` command line: one flag per request field, named as the field with dashes."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import fields
from pathlib import Path
from typing import Any, TypeVar

from service.answer_json import answer_dict, ask_dict
from service.asking.ask_flow import Asker
from service.asking.ask_types import AskAnswer
from service.core.errors import InvalidInput, UnknownName
from service.core.job.request import FLOAT_RANGES, INT_RANGES, EstimateRequest
from service.core.report.answer_types import Answer
from service.observability import Metrics
from service.render.cli_text import answer_text
from service.services import Services
from service.settings import Settings

_T = TypeVar("_T")
LAUNCH_TOOLS = ("deepspeed", "accelerate", "torchrun", "megatron", "torchtitan", "vllm", "sglang")
BOOL_FIELDS = ("flash_attn", "sequence_parallel", "chunked_loss", "precompute_ref_log_probs")
HELP = {
    "model": "preset id or alias (llama-3-8b, 'Llama 3 8B') or a bare size ('7B')",
    "arch": "architecture as JSON (our fields or a Hugging Face config.json), or a path to one",
    "task": "train | finetune | infer",
    "precision": "fp32 | bf16_mixed | fp16_mixed | bf16 | fp8",
    "optimizer": "adamw | adamw_8bit | sgd | sgd_momentum | adafactor | lion",
    "recompute": "none | selective | full",
    "gpu": "GPU id or alias (a100-40gb, 'H100', 4090)",
    "quantization": "serving weights: none | fp8 | int8 | int4 | gptq | awq | nf4 | gguf-q4_k_m ...",
    "activation_model": "hf | megatron | korthikanti | seed_s3",
    "framework": "deepspeed | megatron | fsdp | hf (how gradients and master weights are kept)",
}


def _add_request_flags(parser: argparse.ArgumentParser) -> None:
    for f in fields(EstimateRequest):
        flag = "--" + f.name.replace("_", "-")
        if f.name in BOOL_FIELDS:
            parser.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction,
                                default=None)
        elif f.name in INT_RANGES:
            parser.add_argument(flag, dest=f.name, type=_int, default=None, help=HELP.get(f.name))
        elif f.name in FLOAT_RANGES:
            parser.add_argument(flag, dest=f.name, type=float, default=None)
        else:
            parser.add_argument(flag, dest=f.name, default=None, help=HELP.get(f.name))


def _int(text: str) -> int:
    """Whole numbers, also written 1e3 or with k: a power of two (4k, 32K) means x 1024, as in
    context lengths; any other number x 1000."""
    t = text.strip().lower()
    scale = 1
    if t.endswith("k"):
        t = t[:-1]
        power_of_two = t.isdigit() and int(t) > 0 and int(t) & (int(t) - 1) == 0
        scale = 1024 if power_of_two else 1000
    try:
        value = float(t) * scale
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from exc
    if value != int(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    return int(value)


def _arch(value: str) -> dict[str, Any]:
    path = Path(value)
    text = path.read_text() if not value.lstrip().startswith("{") and path.exists() else value
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput("arch", f"not valid JSON ({exc.msg})", "a JSON object") from exc
    if not isinstance(data, dict):
        raise InvalidInput("arch", "must be a JSON object", "a JSON object")
    return data


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fitcheck", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    est = sub.add_parser("estimate", help="per-GPU memory breakdown for one job (with --gpu "
                         "and no --gpu-count, also the planner's fewest GPUs)")
    _add_request_flags(est)
    est.add_argument("--json", action="store_true", help="print the API's JSON")
    plan = sub.add_parser("plan", help="fewest GPUs and the layout that fits (or: does it fit "
                          "on --gpu-count), with time, cost and the fits-on table")
    _add_request_flags(plan)
    plan.add_argument("--json", action="store_true", help="print the plan as JSON")
    plan.add_argument("--fits-on", dest="fits_on", action=argparse.BooleanOptionalAction,
                      default=True, help="the fewest GPUs of every catalog type (on)")
    plan.add_argument("--emit", choices=LAUNCH_TOOLS, default=None,
                      help="print one launch config of the plan: a file's content on stdout "
                      "(the command that uses it on stderr), or the command line")
    ask = sub.add_parser("ask", help="answer a chat question as the Slack bot would")
    ask.add_argument("question", help="the question, e.g. '7B, seq 4096, ZeRO-3, A100 40GB?'")
    ask.add_argument("--previous", default=None,
                     help="the previous answer's parsed fields as JSON (a thread follow-up)")
    ask.add_argument("--json", action="store_true", help="print intent, parsed, answer, reply")
    serve = sub.add_parser("serve", help="run the REST service (FITCHECK_* settings; no "
                           "FITCHECK_REDIS_URL: an embedded in-process store)")
    serve.add_argument("--host", default=None, help="bind address (FITCHECK_HOST, 127.0.0.1)")
    serve.add_argument("--port", type=int, default=None, help="port (FITCHECK_PORT, 8000)")
    bot = sub.add_parser("bot", help="run the Slack bot (Socket Mode with SLACK_APP_TOKEN; "
                         "--http: /slack/events and /healthz)")
    bot.add_argument("--http", action="store_true", help="HTTP mode instead of Socket Mode")
    bot.add_argument("--port", type=int, default=None,
                     help="port of /slack/events and /healthz (FITCHECK_BOT_PORT, 3000)")
    return parser


def _request(args: argparse.Namespace) -> EstimateRequest:
    values = {f.name: getattr(args, f.name) for f in fields(EstimateRequest)}
    if values["arch"] is not None:
        values["arch"] = _arch(values["arch"])
    return EstimateRequest(**values)


async def _with_services(work: Callable[[Services, str], Awaitable[_T]]) -> _T:
    """Run ``work`` on the service's own road (store, registry, caches) from the settings:
    with ``FITCHECK_REDIS_URL`` set, a team's registered models answer here too."""
    settings = Settings()
    services = Services.open(settings, Metrics())
    base = settings.public_url or f"http://{settings.host}:{settings.port}"
    try:
        return await work(services, base)
    finally:
        await services.close()


def run_estimate(args: argparse.Namespace, fits_on: bool = False) -> int:
    request = _request(args)
    emit = getattr(args, "emit", None)

    async def work(services: Services, base: str) -> Answer:
        return await services.estimates.answer(request, base, fits_on=fits_on and not emit)

    answer = asyncio.run(_with_services(work))
    if emit:
        return _emit(answer, emit)
    print(json.dumps(answer_dict(answer), indent=2) if args.json else answer_text(answer))
    return 0


def _emit(answer: Answer, tool: str) -> int:
    config = answer.launch.get(tool)
    if config is None:
        have = ", ".join(answer.launch) or "none: the plan does not fit"
        print(f"fitcheck: no {tool} config for this plan ({answer.verdict}). Configs for this "
              f"plan: {have}.", file=sys.stderr)
        return 2
    print(config.text, end="" if config.text.endswith("\n") else "\n")
    if config.command:
        print(f"# save as {config.filename}; run:\n{config.command}", file=sys.stderr)
    for note in config.notes:
        print(f"# {note}", file=sys.stderr)
    return 0


def run_ask(args: argparse.Namespace) -> int:
    previous = json.loads(args.previous) if args.previous else None

    async def work(services: Services, base: str) -> AskAnswer:
        return await Asker(services.estimates, base).ask(
            args.question, previous if isinstance(previous, dict) else None)

    result = asyncio.run(_with_services(work))
    print(json.dumps(ask_dict(result), indent=2) if args.json else result.reply)
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        return _run(argv)
    except BrokenPipeError:  # "fitcheck ask ... | head": the reader left early, as it may
        # (the Python docs' recipe: point stdout at devnull so the exit flush does not fail)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _run(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "ask":
        return run_ask(args)
    if args.command == "serve":
        from service.serve import serve  # local: the engine commands need no web stack

        return serve(args.host, args.port)
    if args.command == "bot":
        from bot.run import main as run_bot  # local: only this command needs the bot

        return run_bot(http=args.http, port=args.port)
    try:
        return run_estimate(args, fits_on=args.command == "plan" and args.fits_on)
    except InvalidInput as exc:
        print(f"fitcheck: {exc.field}: {exc.message}. Accepted: {exc.accepted}.", file=sys.stderr)
    except UnknownName as exc:
        print(f"fitcheck: {exc}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
