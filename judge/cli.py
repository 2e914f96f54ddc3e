"""`tandem judge …` (also `python -m judge …`): train, calibrate, label, evaluate.

    train     --data steps.jsonl --out judge.onnx [--model gbdt|logreg] [--labels agreement|outcome|teacher|heuristic]
              [--cloud-share 0.4]
    calibrate --model judge.onnx --data steps.jsonl --cloud-share 0.4     (writes the threshold into the card)
    label     --data steps.jsonl --url http://host/v1 --model NAME --out labelled.jsonl
    evaluate  --model judge.onnx --data steps.jsonl [--labels agreement] [--held-out 0.2] [--against serving.onnx]
              [--report folder]          (report.md, report.json, roc.png, share.png, calibration.png)
    promote   --candidate new.onnx --data rows.jsonl [--serving judge.onnx] [--labels failed] [--report folder]
    groups    --data rows.jsonl [--labels failed]      (held-out AUC per feature group, across families)
    lofo      --data rows.jsonl [train's options] [--out folder]   (leave one agent family out, for each)
    share     --data rows.jsonl [--model judge.onnx] [--target 0.4]  (the online controller's share per family)
    retrain   --data recent.jsonl [--shipped rows.jsonl.gz] [--serving judge.onnx]   (promotes only if not worse)
    import    PATH... --out rows.jsonl[.gz] [--outcomes report.json] [--family F] [--run-prefix P] [--keep-going]
    audit     [--file label-audit.jsonl] [--json]     (the status label's precision/recall on hand-read steps)

Errors (bad data, a bad model file, a teacher that refuses) print one line and exit 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import orjson

from judge import arguments, audit, groups, imports, lofo, retrain, share
from judge.calibrate import threshold_for_share
from judge.card import JudgeModelError, card_path, write_card
from judge.labels import LABEL_SOURCES, labels_in
from judge.modes import IGNORE_HELP, add_tree_options, parse_ignore, tree_flags, tree_params
from judge.rows import JudgeTrainingError, load_rows, matrix, write_rows


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Each option's default after its help (none: its help says what happens), examples as written."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or action.default is False or action.default == "":
            return action.help
        return super()._get_help_string(action)


EXAMPLES = {
    "train": "tandem judge train --data rows.jsonl --out judge.onnx",
    "calibrate": "tandem judge calibrate --model judge.onnx --data rows.jsonl --cloud-share 0.4",
    "label": "tandem judge label --data rows.jsonl --url http://127.0.0.1:8000/v1 --model big --out labelled.jsonl",
    "evaluate": "tandem judge evaluate --model judge.onnx --data rows.jsonl --held-out 0.2 --report report/",
    "promote": "tandem judge promote --candidate new.onnx --data rows.jsonl --report report/",
}
LABELS_HELP = (
    "label source (none: read from the data: agreement where rows have edge_wrong, else teacher, "
    "failed (action_failed), outcome, heuristic)"
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tandem judge",
        description="Train, calibrate and evaluate the step judge.",
        formatter_class=_HelpFormatter,
        epilog="example:\n  tandem judge train --data judge/data/real-runs.jsonl.gz --out judge.onnx",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    train = commands.add_parser("train", help="train a judge on tandem.judge-row/1 data and export it to ONNX")
    train.add_argument("--data", type=Path, required=True, help="tandem.judge-row/1 rows (.jsonl or .jsonl.gz)")
    train.add_argument(
        "--out", type=arguments.output, required=True, help="the .onnx file; its card is written beside it"
    )
    train.add_argument("--model", choices=("logreg", "gbdt"), default="gbdt", help="the classifier")
    train.add_argument("--labels", choices=LABEL_SOURCES, default=None, help=LABELS_HELP)
    train.add_argument(
        "--cloud-share", type=arguments.fraction(), default=0.4, help="share of steps the threshold sends to the cloud"
    )
    train.add_argument(
        "--held-out", type=arguments.fraction(), default=0.2, help="share of trajectories held out for evaluation"
    )
    train.add_argument("--seed", type=arguments.SEED, default=0, help="seed of the split and the classifier")
    train.add_argument("--describe", default="", help="where the data came from, for the model card")
    train.add_argument("--sees", choices=("state", "draft"), default="state", help="draft: also the step's own action")
    train.add_argument("--ignore", default="", help=IGNORE_HELP)
    add_tree_options(train)

    calibrate = commands.add_parser("calibrate", help="set the card's threshold for a target cloud share")
    calibrate.add_argument("--model", type=Path, required=True, help="the .onnx file (its card is updated)")
    calibrate.add_argument("--data", type=Path, required=True, help="rows to calibrate on")
    calibrate.add_argument(
        "--cloud-share", type=arguments.fraction(), required=True, help="share of steps to send to the cloud"
    )

    label = commands.add_parser("label", help="ask an OpenAI-compatible model which steps needed the cloud")
    label.add_argument("--data", type=Path, required=True, help="rows to label")
    label.add_argument("--url", type=arguments.http_url, required=True, help="base URL, e.g. http://localhost:8000/v1")
    label.add_argument("--model", required=True, help="the teacher model's name")
    label.add_argument("--out", type=arguments.output, required=True, help="the labelled rows")
    label.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the key")
    label.add_argument(
        "--steps-per-request", type=arguments.COUNT, default=40, help="steps the teacher judges in one request"
    )
    label.add_argument("--retries", type=arguments.RETRIES, default=2, help="retries of a failed request")

    imports.add_parser(commands)
    groups.add_parser(commands)
    lofo.add_parser(commands)
    audit.add_parser(commands)
    share.add_parser(commands)
    retrain.add_parser(commands)

    evaluate = commands.add_parser("evaluate", help="AUC, precision/recall, calibration and cloud share on data")
    evaluate.add_argument("--model", type=Path, required=True, help="the .onnx file (its .card.json beside it)")
    evaluate.add_argument("--data", type=Path, required=True, help="rows to evaluate on")
    evaluate.add_argument(
        "--labels",
        choices=LABEL_SOURCES,
        default=None,
        help="label source (none: the one the rows carry; see --help of train)",
    )
    evaluate.add_argument(
        "--held-out", type=arguments.fraction(), default=None, help="evaluate only this held-out share"
    )
    evaluate.add_argument("--json", action="store_true", help="print the figures as JSON")
    evaluate.add_argument("--against", type=Path, help="the serving model to compare with (its .card.json beside it)")
    evaluate.add_argument("--report", type=arguments.folder, help="folder for report.md, report.json and the PNG plots")

    promote = commands.add_parser("promote", help="replace the serving model with a candidate that is not worse")
    promote.add_argument("--candidate", type=Path, required=True, help="the new .onnx file")
    promote.add_argument("--serving", type=Path, default=None, help="default: the shipped judge/models/judge.onnx")
    promote.add_argument("--data", type=Path, required=True, help="rows both models are compared on")
    promote.add_argument("--labels", choices=LABEL_SOURCES, default="failed", help="label source")
    promote.add_argument("--held-out", type=arguments.fraction(), default=0.2, help="share of trajectories compared on")
    promote.add_argument("--report", type=arguments.folder, help="folder for the comparison's report and plots")
    EXAMPLES.setdefault("import", "tandem judge import runs/ --out rows.jsonl.gz --keep-going")
    EXAMPLES.setdefault("groups", "tandem judge groups --data rows.jsonl --labels failed")
    EXAMPLES.setdefault("lofo", "tandem judge lofo --data rows.jsonl.gz --out lofo/")
    EXAMPLES.setdefault("audit", "tandem judge audit --file judge/data/label-audit.jsonl")
    EXAMPLES.setdefault("retrain", "tandem judge retrain --data recent.jsonl --serving /models/judge.onnx")
    EXAMPLES.setdefault("share", "tandem judge share --data rows.jsonl.gz --family openhands-0")
    for name, command in commands.choices.items():  # every command: its defaults and an example
        command.formatter_class = _HelpFormatter
        command.epilog = f"example:\n  {EXAMPLES[name]}"
    return parser


def _train(args: argparse.Namespace) -> int:
    from judge.train import TrainConfig, train  # scikit-learn loads only for training

    rows = load_rows(args.data)
    if args.labels is None:
        args.labels = labels_in(rows)
        print(f"labels: {args.labels} (read from the data; --labels chooses)", file=sys.stderr)
    sources = args.data.with_name(args.data.name.split(".")[0] + ".sources.json")
    try:
        trees = tree_params(args.trees, args.depth, args.rate)
    except ValueError as error:
        raise JudgeTrainingError(str(error)) from None
    config = TrainConfig(
        model=args.model,
        labels=args.labels,
        cloud_share=args.cloud_share,
        held_out_fraction=args.held_out,
        seed=args.seed,
        sees=args.sees,
        ignore=parse_ignore(args.ignore),
        gbdt=trees,
        made_by=f"tandem judge train --data {args.data.name} --model {args.model} --labels {args.labels} "
        f"--cloud-share {args.cloud_share} --held-out {args.held_out} --seed {args.seed}"
        + (f" --sees {args.sees}" if args.sees != "state" else "")
        + (f" --ignore {','.join(parse_ignore(args.ignore))}" if parse_ignore(args.ignore) else "")
        + (tree_flags(trees) if args.model == "gbdt" else ""),
        data_description=args.describe or f"{args.data.name}",
        sources=orjson.loads(sources.read_bytes()) if sources.exists() else None,
        show_progress=True,
    )
    result = train(rows, config, args.out)
    evaluation = result.card.evaluation
    print(
        f"wrote {args.out} ({len(result.model_bytes):,} bytes) and {card_path(args.out).name}: "
        f"held-out AUC {evaluation['auc']}, precision {evaluation['precision']}, recall {evaluation['recall']} "
        f"at threshold {result.card.threshold:.4f} (cloud share {evaluation['cloud_share']})"
    )
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    from judge.model import JudgeModel

    model = JudgeModel.load(args.model)
    rows = load_rows(args.data)
    scores = model.score_batch(matrix(rows, model.card.sees))
    threshold = threshold_for_share(scores, args.cloud_share)
    card = model.card
    card.threshold = threshold
    card.target_cloud_share = args.cloud_share
    card.evaluation["calibration"] = {
        "data": args.data.name,
        "rows": len(rows),
        "cloud_share": round(float((scores >= threshold).mean()), 4),
    }
    write_card(card_path(args.model), card)
    share = card.evaluation["calibration"]["cloud_share"]
    print(f"threshold {threshold:.6f} gives cloud share {share} on {len(rows)} rows; card updated")
    return 0


def _label(args: argparse.Namespace) -> int:
    from judge.label import Teacher, TeacherConfig, label_rows

    rows = load_rows(args.data)
    config = TeacherConfig(
        url=args.url,
        model=args.model,
        api_key=os.environ.get(args.api_key_env),
        steps_per_request=args.steps_per_request,
        retries=args.retries,
    )
    teacher = Teacher(config)
    try:
        result = label_rows(rows, teacher)
    finally:
        teacher.close()
    if result.labelled_rows == 0 and result.failures:
        # Nothing labelled and every request failed: the teacher is unreachable or refusing.
        print(f"tandem judge label: error: no row labelled; {args.url}: {result.failures[0]}", file=sys.stderr)
        return 1
    write_rows(args.out, rows)
    print(
        f"labelled {result.labelled_rows} rows of {result.trajectories} trajectories ({result.positives} cloud) "
        f"in {result.requests} requests; {result.unlabelled_rows} rows left unlabelled"
    )
    for failure in result.failures[:5]:
        print(f"  {failure}", file=sys.stderr)
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    from judge.evaluate import compare, write_report
    from judge.model import JudgeModel

    model = JudgeModel.load(args.model)
    serving = JudgeModel.load(args.against) if args.against is not None else None
    rows = load_rows(args.data)
    if args.labels is None:
        # The label the rows carry: a card's own label (e.g. `combined`, `agreement`) may be one
        # that rows imported from another agent do not have.
        args.labels = labels_in(rows)
        print(f"labels: {args.labels} (read from the data; --labels chooses)", file=sys.stderr)
    models = "the model and the serving one" if serving is not None else "the model"
    print(f"evaluate: scoring {len(rows):,} rows with {models} ...", file=sys.stderr, flush=True)
    comparison = compare(model, serving, rows, args.labels, args.held_out or 0.0)
    if args.report is not None:
        write_report(comparison, args.report, f"Judge evaluation: {args.model.name} on {args.data.name}")
    if args.json:
        print(orjson.dumps(comparison.figures, option=orjson.OPT_INDENT_2).decode())
        return 0
    for name, figures in comparison.figures.items():
        positives = int(comparison.y.sum())
        print(
            f"{name}: {figures['steps']} steps ({args.labels} labels: {positives} positives, "
            f"{figures['steps'] - positives} negatives): "
            f"AUC {figures['auc']}, Brier {figures['brier']}; at threshold {figures['threshold']}: "
            f"cloud share {figures['cloud_share']}, precision {figures['precision']}, recall {figures['recall']}"
        )
        for family, f in figures["by_family"].items():
            counts = f"{f['positives']} positives, {f['negatives']} negatives"
            scored = f"AUC {f['auc']}, cloud share {f['cloud_share']}" if f["scored"] else f["note"]
            print(f"  {family}: {f['steps']} steps ({counts}): {scored}")
    if serving is not None:
        print(comparison.reason)
    return 0


def _promote(args: argparse.Namespace) -> int:
    from judge.evaluate import compare, promote, write_report
    from judge.model import DEFAULT_MODEL, JudgeModel

    serving_path = args.serving or DEFAULT_MODEL
    candidate = JudgeModel.load(args.candidate)
    try:
        serving: JudgeModel | None = JudgeModel.load(serving_path)
    except JudgeModelError as exc:
        if serving_path.exists():
            # A serving model that cannot score these rows (another feature version, a broken
            # file) cannot be shown to be better: say so rather than keep a model that won't load.
            print(f"the serving model cannot be compared ({exc}); judging the candidate alone", file=sys.stderr)
        serving = None
    comparison = compare(candidate, serving, load_rows(args.data), args.labels, args.held_out)
    if args.report is not None:
        write_report(comparison, args.report, f"Promotion of {args.candidate.name}")
    promote(args.candidate, serving_path, comparison)
    print(f"promoted {args.candidate} to {serving_path}: {comparison.reason}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    handlers = {
        "train": _train,
        "calibrate": _calibrate,
        "label": _label,
        "evaluate": _evaluate,
        "import": imports.run_import,
        "promote": _promote,
        "groups": groups.run_groups,
        "lofo": lofo.run_lofo,
        "audit": audit.run_audit,
        "share": share.run_share,
        "retrain": retrain.run_retrain,
    }
    try:
        return handlers[args.command](args)
    except UnicodeDecodeError as exc:  # before ValueError, its base: the message names no file
        print(f"tandem judge {args.command}: error: a file is not UTF-8 text ({exc.reason})", file=sys.stderr)
        return 2
    except (JudgeTrainingError, JudgeModelError, ValueError) as exc:  # TrajectoryFormatError is a ValueError
        print(f"tandem judge {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        if exc.filename is None:
            raise
        print(f"tandem judge {args.command}: error: {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
