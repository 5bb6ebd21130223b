"""Benchmark: the default MyTransformer on the stories, as a diffusion model and as a causal model;
the course's TinyDenoiser; the causal model fine-tuned as a diffusion model; and the chapter's GPT
(notebook 09), with and without dropout.

    python benchmarks/stories.py --steps 1500
    python benchmarks/stories.py --steps 1500 --models diffusion,tinydenoiser --threads 1
    python benchmarks/stories.py --steps 1500 --models causal,finetune --threads 1
    python benchmarks/stories.py --steps 5000 --models tinydenoiser --write-curve course/tinydenoiser_curve.py
    python benchmarks/stories.py --steps 1500 --models gpt --dropouts 0.2 --threads 1

Trains both with the solutions' code and recipe (batch 64, L 32, Adam lr 1e-3 with betas
(0.9, 0.95), seeded) and reports, for each,
the loss per token on the training text and on held-out text, and training tokens per second.
It also times an equal-sized model whose heads are computed with one matrix and
F.scaled_dot_product_attention, and prints how much faster it is.

`--models tinydenoiser`: the course's TinyDenoiser(2002) (course/tinydenoiser.py: all heads from one
matrix, no position table, queries and keys rotated by position), trained and measured exactly as
the diffusion MyTransformer; with `diffusion` in the same run, their training steps are also timed
in alternating rounds (`tinydenoiser_speed`). `--write-curve FILE` writes its loss curve (the
window average, every `--curve-every` steps) as the Python module that notebook 07 plots.

`--models finetune`: the causal MyTransformer (the one trained in this run with `causal`, else one
trained here with the same recipe) copied into a MyTransformer without the causal switch (the
triangle of infinite energies removed) and trained `--finetune-steps` more steps with DiffusionLoss;
its held-out diffusion loss per token before and after, beside the diffusion model from scratch.

`--models gpt`: the chapter's GPT(Config(vocab_size=2002, dropout=p)) of notebook 09 (the master's
own code) for each p of `--dropouts`, trained left to right with the same recipe and batches as the
causal MyTransformer (NextTokenLoss), with the same losses per token, and the gap between held-out
and training loss; then, timed in one run in alternating rounds, training steps of the causal
MyTransformer, of the GPT as students write it, and of the GPT on the fast path
(F.scaled_dot_product_attention), with their parameter counts.

Loss per token (the same procedure on training and held-out text):
- the text is tokenised with the training vocabulary and cut into consecutive windows of L
  tokens; `--eval-windows` of them, evenly spread through the text, are used;
- causal: NextTokenLoss (the mean cross entropy of the L-1 next-token guesses per window);
- diffusion: DiffusionLoss(net, windows, STORY_MASK) / L, with the random times and masks
  drawn from a fixed seed, averaged over `--eval-repeats` passes over the windows; also, for
  comparison with COURSE.md's reference numbers, the same with each position masked with
  probability t/T (`BernoulliDiffusionLoss`, the loss as COURSE.md words it).

Training text: $COURSE_STORIES_FILE (the shared offline file when it exists), else the
course's cached download. Held-out text: --heldout FILE (default: the shared offline
TinyStories validation sample), else bytes 4,000,000-5,500,000 of the file the course
downloads its first 4,000,000 bytes from.
The last line printed is one JSON object holding all the numbers.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.reference import ReferenceNamespace  # noqa: E402
from course import (  # noqa: E402
    DiffusionLoss,
    MakeGuesser,
    NextTokenLoss,
    UndiffuseTemperature,
    pick_device,
)
from course.plots import WindowAverage  # noqa: E402
from course.tinydenoiser import TinyDenoiser  # noqa: E402
from course.training import STORY_ADAM, Seed, TrainLoop  # noqa: E402
from instructor.build import reference_namespace  # noqa: E402

# the offline copies, if here: ../shared beside the clone, or where $COURSE_SHARED says (make test SHARED=...)
SHARED = Path(os.environ.get("COURSE_SHARED") or ROOT.parent / "shared") / "data" / "tinystories"
SHARED_TRAIN = SHARED / "TinyStories-train-first2MiB.txt"
SHARED_HELDOUT = SHARED / "TinyStories-valid-sample.txt"
UNUSED_RANGE = (4_000_000, 5_500_000)      # of the course's download: bytes it never reads


# ---- the same network, all heads at once ---------------------------------------------------------
class FusedMultiHead(nn.Module):
    """MultiHead computed with one (dim -> 3*dim) matrix and F.scaled_dot_product_attention.

    Same parameters as `heads` separate Heads (3*dim*dim, no bias) and the same `mix`.
    """

    def __init__(self, dim: int, heads: int, causal: bool = False, sdpa: bool = True):
        super().__init__()
        self.n_heads, self.causal, self.sdpa = heads, causal, sdpa
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.mix = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:      # x: (batch, L, dim)
        batch, L, dim = x.shape
        qkv = self.qkv(x).view(batch, L, 3, self.n_heads, dim // self.n_heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)                   # each (batch, heads, L, head_dim)
        if self.sdpa:
            out = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        else:                                                  # the same, written out
            dots = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
            if self.causal:
                dots = dots.masked_fill(torch.ones(L, L, dtype=torch.bool, device=x.device).triu(1),
                                        -math.inf)
            out = dots.softmax(dim=-1) @ v
        return self.mix(out.transpose(1, 2).reshape(batch, L, dim))

    @classmethod
    def like(cls, multihead: nn.Module, causal: bool = False, sdpa: bool = True) -> FusedMultiHead:
        """A fused copy of a MultiHead (with .heads[i].Q/K/V and .mix): the same function."""
        heads = list(multihead.heads)
        dim = multihead.mix.in_features
        fused = cls(dim, len(heads), causal, sdpa)
        with torch.no_grad():
            fused.qkv.weight.copy_(torch.cat([torch.cat([getattr(h, name).weight for h in heads])
                                              for name in ("Q", "K", "V")]))
            fused.mix.load_state_dict(multihead.mix.state_dict())
        return fused


def Fused(net: nn.Module, causal: bool = False, sdpa: bool = True) -> nn.Module:
    """Replace, in place, every block's attention of a MyTransformer by its FusedMultiHead copy."""
    for block in net.blocks:
        block.attention = FusedMultiHead.like(block.attention, causal, sdpa)
    return net


def ParameterCount(net: nn.Module) -> int:
    return sum(p.numel() for p in net.parameters() if p.requires_grad)


# ---- text and evaluation ---------------------------------------------------------------------------
def HeldoutText(path: str | None) -> tuple[str, str]:
    """The held-out text and where it came from."""
    if path:
        return Path(path).read_text(errors="ignore"), path
    if SHARED_HELDOUT.exists():
        return SHARED_HELDOUT.read_text(errors="ignore"), str(SHARED_HELDOUT)
    import requests

    from course.data import URL

    first, last = UNUSED_RANGE
    response = requests.get(URL, headers={"Range": f"bytes={first}-{last - 1}"}, timeout=120)
    response.raise_for_status()
    if response.status_code != 206:
        raise RuntimeError("the server ignored the range request; pass --heldout FILE")
    return response.content.decode("utf-8", errors="ignore"), f"{URL} bytes {first}-{last - 1}"


def Windows(tokens: torch.Tensor, n: int, L: int) -> torch.Tensor:
    """`n` non-overlapping windows of L tokens, evenly spread through `tokens`: shape (n, L)."""
    whole = tokens[: len(tokens) // L * L].view(-1, L)
    if n >= len(whole):
        return whole
    return whole[torch.linspace(0, len(whole) - 1, n).long()]


def BernoulliDiffusionLoss(net: nn.Module, x_0: torch.Tensor, mask: int) -> torch.Tensor:
    """The diffusion loss with each position masked with probability t/T (T = L), weight T/t:
    the course's DiffusionLoss leaves the number of masks to chance (COURSE.md's wording)."""
    batch, L = x_0.shape
    t = torch.randint(1, L + 1, (batch, 1), device=x_0.device)
    masked = torch.rand(batch, L, device=x_0.device) < t / L
    logp = net(x_0.masked_fill(masked, mask)).float().log_softmax(dim=-1)
    nll = -logp.gather(-1, x_0[..., None])[..., 0]
    return ((L / t) * (nll * masked).sum(dim=1, keepdim=True)).mean()


@torch.no_grad()
def LossPerToken(net: nn.Module, windows: torch.Tensor, causal: bool, mask: int,
                 repeats: int = 4, batch: int = 256, seed: int = 1234,
                 diffusion_loss=DiffusionLoss) -> float:
    """The loss per token defined in the module docstring (deterministic for a given seed)."""
    net.eval()
    device = next(net.parameters()).device
    state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    total, count = 0.0, 0
    for _ in range(1 if causal else repeats):
        for chunk in windows.split(batch):
            chunk = chunk.to(device)
            if causal:
                loss = NextTokenLoss(net, chunk)
            else:
                loss = diffusion_loss(net, chunk, mask) / chunk.shape[1]
            total += loss.item() * len(chunk)
            count += len(chunk)
    torch.random.set_rng_state(state)
    net.train()
    return total / count


def TimeSteps(nets: dict[str, nn.Module], make_batch, loss_fn, steps: int, rounds: int = 4,
              warmup: int = 2) -> dict[str, float]:
    """Seconds per training step (Adam) of each network, timed in alternating rounds so that a
    change in the machine's load affects all of them alike."""
    opts = {name: torch.optim.Adam(net.parameters(), lr=1e-3) for name, net in nets.items()}
    seconds = dict.fromkeys(nets, 0.0)
    per_round = max(1, steps // rounds)

    def run(name: str, n: int) -> float:
        net, opt = nets[name], opts[name]
        device = next(net.parameters()).device
        start = time.perf_counter()
        for _ in range(n):
            opt.zero_grad()
            loss_fn(net, make_batch().to(device)).backward()
            opt.step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - start

    for name in nets:
        run(name, warmup)
    for _ in range(rounds):
        for name in nets:
            seconds[name] += run(name, per_round)
    return {name: total / (per_round * rounds) for name, total in seconds.items()}


def WriteSamples(net: nn.Module, namespace: dict, causal: bool, n: int, L: int) -> list[str]:
    """A few stories, seeded: left to right from "once upon a time" (temperature 0.8), or
    undiffused from all masks as the solutions do (T = 4L steps, temperature 0.6)."""
    import course.stories as stories

    namespace.update(story_vocab=stories.story_vocab, STORY_UNK=stories.STORY_UNK,
                     STORY_MASK=stories.STORY_MASK)
    net.eval()
    Seed(1)
    if causal:
        texts = [namespace["WriteLeftToRight"](net, "once upon a time", L=L, temperature=0.8)
                 for _ in range(n)]
    else:
        guess = MakeGuesser(net, forbidden=[stories.STORY_MASK, stories.STORY_UNK])
        texts = [stories.StoryText(UndiffuseTemperature(guess, 4 * L, temperature=0.6, L=L,
                                                        mask=stories.STORY_MASK))
                 for _ in range(n)]
    net.train()
    return texts


def FineTune(causal_net: nn.Module | None, vocab_size: int, args, device: str, make_batch,
             diffusion_loss, heldout_windows: torch.Tensor, train_windows: torch.Tensor,
             mask: int) -> dict:
    """The causal MyTransformer's weights in a MyTransformer without the switch, trained on with
    DiffusionLoss (the page's closing suggestion); its held-out diffusion loss before and after."""
    if causal_net is None:                      # no causal model in this run: train one the same way
        Seed(args.seed)
        causal_net = ReferenceNamespace(causal=True)["MyTransformer"](vocab_size, causal=True).to(device)
        TrainLoop(causal_net, make_batch, NextTokenLoss, args.steps, lr=args.lr,
                  betas=(STORY_ADAM["betas"][0], args.beta2), desc="causal (to fine-tune)",
                  progress=not args.no_progress)
    namespace = ReferenceNamespace()
    net = namespace["MyTransformer"](vocab_size).to(device)
    net.load_state_dict(causal_net.state_dict())         # same numbers, no triangle
    before = LossPerToken(net, heldout_windows, False, mask, args.eval_repeats)
    steps = args.finetune_steps or args.steps
    Seed(args.seed + 1)
    losses = TrainLoop(net, make_batch, diffusion_loss, steps, lr=args.lr, scale=1.0 / args.L,
                       betas=(STORY_ADAM["betas"][0], args.beta2), desc="fine-tune as diffusion",
                       progress=not args.no_progress)
    tail = losses[-100:]
    return {"causal_steps": args.steps, "finetune_steps": steps,
            "heldout_loss_per_token_before": round(before, 4),
            "heldout_loss_per_token": round(LossPerToken(net, heldout_windows, False, mask,
                                                         args.eval_repeats), 4),
            "train_loss_per_token": round(LossPerToken(net, train_windows, False, mask,
                                                       args.eval_repeats), 4),
            "final_window_loss": round(sum(tail) / len(tail), 4),
            "first_window_loss": round(sum(losses[:100]) / len(losses[:100]), 4),
            "seconds": round(TrainLoop.last_seconds, 1),
            "samples": WriteSamples(net, namespace, False, args.samples, args.L)}


def TrainGPT(p: float, vocab_size: int, args, device: str, make_batch, train_windows: torch.Tensor,
             heldout_windows: torch.Tensor, mask: int) -> dict:
    """The chapter's GPT (notebook 09's own code) with dropout p, trained left to right and measured."""
    namespace = reference_namespace("09_gpt")
    Seed(args.seed)
    net = namespace["GPT"](namespace["Config"](vocab_size=vocab_size, dropout=p)).to(device)
    losses = TrainLoop(net, make_batch, NextTokenLoss, args.steps, lr=args.lr,
                       betas=(STORY_ADAM["betas"][0], args.beta2), desc=f"gpt, dropout {p}",
                       progress=not args.no_progress)
    seconds = TrainLoop.last_seconds
    heldout = LossPerToken(net, heldout_windows, True, mask)
    train = LossPerToken(net, train_windows, True, mask)
    tail = losses[-100:]
    namespace["WriteLeftToRight"] = namespace["page"].WriteLeftToRight
    return {"dropout": p, "parameters": ParameterCount(net),
            "heldout_loss_per_token": round(heldout, 4), "train_loss_per_token": round(train, 4),
            "gap": round(heldout - train, 4), "final_window_loss": round(sum(tail) / len(tail), 4),
            "tokens_per_second": round(args.steps * args.batch * args.L / seconds),
            "seconds": round(seconds, 1),
            "samples": WriteSamples(net, namespace, True, args.samples, args.L)}


def GPTSpeed(vocab_size: int, args, device: str, make_batch) -> dict:
    """Training steps (NextTokenLoss) of the causal MyTransformer, of the chapter's GPT (dropout 0.2)
    and of the same GPT on the fast path, timed in alternating rounds in one run."""
    namespace = reference_namespace("09_gpt")
    Seed(args.seed)
    nets = {"my_transformer": namespace["page"].MyTransformer(vocab_size, causal=True)}
    nets["gpt"] = namespace["GPT"](namespace["Config"](vocab_size=vocab_size, dropout=0.2))
    nets["gpt_fast"] = namespace["MakeFast"](nets["gpt"])
    nets = {name: net.to(device) for name, net in nets.items()}
    seconds = TimeSteps(nets, make_batch, NextTokenLoss, args.speed_steps)
    tokens = args.batch * args.L
    return {"steps_timed": args.speed_steps,
            **{f"{name}_parameters": ParameterCount(net) for name, net in nets.items()},
            **{f"{name}_tokens_per_second": round(tokens / s) for name, s in seconds.items()},
            "ratio_gpt": round(seconds["my_transformer"] / seconds["gpt"], 2),
            "ratio_gpt_fast": round(seconds["my_transformer"] / seconds["gpt_fast"], 2)}


def WriteCurve(path: str, losses: list[float], every: int, window: int, results: dict) -> None:
    """Write TinyDenoiser's loss curve as a small Python module (window average every `every` steps)."""
    averaged = WindowAverage(losses, window)
    n = len(losses)
    steps = list(range(every, n + 1, every)) + ([n] if n % every else [])
    values = [f"{float(averaged[s - 1]):.3f}" for s in steps]
    rows = "\n".join("    " + ", ".join(values[i:i + 12]) + "," for i in range(0, len(values), 12))
    steps_code = f"list(range({every}, {n + 1}, {every}))" + (f" + [{n}]" if n % every else "")
    r, heldout = results, results["tinydenoiser"]["heldout_loss_per_token"]
    text = (
        f'"""TinyDenoiser\'s loss per token on the stories, from one run of the solutions\' recipe.\n\n'
        f"Made by (do not edit by hand)\n\n"
        f"    python benchmarks/stories.py --models tinydenoiser --steps {n} --write-curve {path}\n\n"
        f"TinyDenoiser(2002) trained with DiffusionLoss as in notebook 07\n"
        f"(batch {r['batch']}, L {r['L']}, Adam lr {r['lr']}, betas (0.9, {r['beta2']}), "
        f"seed {r['seed']}) on {r['train_tokens']:,} tokens\n"
        f"of TinyStories, on {r['device']} ({r['machine']}).\n"
        f"Held-out loss per token at the end: {heldout}.\n\n"
        f"STEPS[n] is a training step and LOSS[n] the loss per token averaged over the {window} steps\n"
        f"up to it (what PlotLosses draws). TinyDenoiserCurve(steps) cuts the curve at `steps`.\n"
        f'"""\n'
        f"from __future__ import annotations\n\n"
        f"WINDOW = {window}\n"
        f"STEPS = {steps_code}\n"
        f"LOSS = [\n{rows}\n]\n"
        f"HELDOUT_LOSS_PER_TOKEN = {heldout}\n\n\n"
        f"def TinyDenoiserCurve(steps: int | None = None) -> tuple[list[int], list[float]]:\n"
        f'    """(steps, loss per token) of the course\'s TinyDenoiser run, up to `steps` steps."""\n'
        f"    keep = [i for i, s in enumerate(STEPS) if steps is None or s <= steps]\n"
        f"    return [STEPS[i] for i in keep], [LOSS[i] for i in keep]\n")
    Path(path).write_text(text)
    print(f"wrote {path} ({len(values)} points)")


def Machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    text = f"{cpu}, {os.cpu_count()} cores, torch {torch.__version__}, {torch.get_num_threads()} threads"
    if torch.cuda.is_available():
        text += f", GPU {torch.cuda.get_device_name()}"
    return text


# ---- the benchmark ------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1500, help="training steps per model (default 1500)")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--L", type=int, default=32, help="tokens per window (default 32)")
    parser.add_argument("--lr", type=float, default=STORY_ADAM["lr"])
    parser.add_argument("--beta2", type=float, default=STORY_ADAM["betas"][1],
                        help="Adam's beta2 (default: the solutions' %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--models", default="diffusion,causal",
                        help="which to train: diffusion, causal, tinydenoiser, finetune, gpt "
                             "(default: diffusion,causal)")
    parser.add_argument("--finetune-steps", type=int, default=0,
                        help="with --models finetune: diffusion steps after the causal training "
                             "(default: --steps)")
    parser.add_argument("--write-curve", default=None, metavar="FILE",
                        help="with --models tinydenoiser: write its loss curve as a Python module")
    parser.add_argument("--curve-every", type=int, default=25, help="steps between the curve's points")
    parser.add_argument("--dropouts", default="0.2,0.0",
                        help="with --models gpt: the GPT's dropout, one run each (default: 0.2,0.0)")
    parser.add_argument("--train-loss", choices=["course", "bernoulli"], default="course",
                        help="diffusion training loss: the course's DiffusionLoss (default) or "
                             "BernoulliDiffusionLoss (the number of masks left to chance)")
    parser.add_argument("--heldout", default=os.environ.get("COURSE_HELDOUT_FILE"),
                        help="held-out text file (default: the shared TinyStories validation sample)")
    parser.add_argument("--eval-windows", type=int, default=2048)
    parser.add_argument("--eval-repeats", type=int, default=4, help="passes for the diffusion loss")
    parser.add_argument("--speed-steps", type=int, default=40, help="steps timed for the speed ratio")
    parser.add_argument("--samples", type=int, default=3, help="stories each model writes (default 3)")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's choice)")
    parser.add_argument("--device", default=None, help="cuda, mps or cpu (default: the best there is)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    args = parser.parse_args(argv)

    if args.threads:
        torch.set_num_threads(args.threads)
    if not os.environ.get("COURSE_STORIES_FILE") and SHARED_TRAIN.exists():
        os.environ["COURSE_STORIES_FILE"] = str(SHARED_TRAIN)
    device = args.device or pick_device()
    models = [m.strip() for m in args.models.split(",") if m.strip()]

    import course.stories as stories

    corpus, mask = stories.corpus, stories.STORY_MASK
    vocab_size = len(stories.story_vocab)
    heldout_text, heldout_source = HeldoutText(args.heldout)
    heldout = stories.TextTokens(heldout_text)
    train_windows = Windows(corpus, args.eval_windows, args.L)
    heldout_windows = Windows(heldout, args.eval_windows, args.L)
    print(f"training text: {os.environ.get('COURSE_STORIES_FILE') or 'the course cache'} "
          f"({len(corpus):,} tokens); held-out: {heldout_source} ({len(heldout):,} tokens, "
          f"{(heldout == stories.STORY_UNK).float().mean():.1%} unknown); device {device}")

    def make_batch() -> torch.Tensor:
        return stories.GetBatch(args.batch, args.L)

    train_diffusion_loss = BernoulliDiffusionLoss if args.train_loss == "bernoulli" else DiffusionLoss

    def diffusion_loss(net: nn.Module, x_0: torch.Tensor) -> torch.Tensor:
        return train_diffusion_loss(net, x_0, mask)

    results: dict = {"benchmark": "stories", "steps": args.steps, "batch": args.batch, "L": args.L,
                     "lr": args.lr, "beta2": args.beta2, "train_loss": args.train_loss, "seed": args.seed,
                     "device": device, "machine": Machine(),
                     "train_tokens": len(corpus), "heldout_tokens": len(heldout),
                     "eval_windows": len(heldout_windows),
                     "load_average_at_start": [round(x, 2) for x in os.getloadavg()]}
    trained: dict[str, nn.Module] = {}
    for kind in models:
        if kind == "finetune":
            results["finetune"] = FineTune(trained.get("causal"), vocab_size, args, device, make_batch,
                                           diffusion_loss, heldout_windows, train_windows, mask)
            print(f"finetune: {json.dumps(results['finetune'], indent=1)}")
            continue
        if kind == "gpt":
            for p in [float(d) for d in args.dropouts.split(",") if d.strip()]:
                results[f"gpt_dropout{p}"] = TrainGPT(p, vocab_size, args, device, make_batch,
                                                      train_windows, heldout_windows, mask)
                print(f"gpt, dropout {p}: {json.dumps(results[f'gpt_dropout{p}'], indent=1)}")
            continue
        causal = kind == "causal"
        namespace = ReferenceNamespace(causal=causal)
        Seed(args.seed)
        if kind == "tinydenoiser":
            net = TinyDenoiser(vocab_size).to(device)
        else:
            net = (namespace["MyTransformer"](vocab_size, causal=True) if causal
                   else namespace["MyTransformer"](vocab_size)).to(device)
        loss_fn = NextTokenLoss if causal else diffusion_loss
        scale = 1.0 if causal else 1.0 / args.L
        losses = TrainLoop(net, make_batch, loss_fn, args.steps, lr=args.lr, scale=scale,
                           betas=(STORY_ADAM["betas"][0], args.beta2), desc=kind,
                           progress=not args.no_progress)
        seconds = TrainLoop.last_seconds
        tail = losses[-100:]
        results[kind] = {
            "heldout_loss_per_token": round(LossPerToken(net, heldout_windows, causal, mask,
                                                         args.eval_repeats), 4),
            "train_loss_per_token": round(LossPerToken(net, train_windows, causal, mask,
                                                       args.eval_repeats), 4),
            **({} if causal else {"heldout_loss_per_token_bernoulli": round(LossPerToken(
                net, heldout_windows, causal, mask, args.eval_repeats,
                diffusion_loss=BernoulliDiffusionLoss), 4)}),
            "final_window_loss": round(sum(tail) / len(tail), 4),
            "tokens_per_second": round(args.steps * args.batch * args.L / seconds),
            "seconds": round(seconds, 1),
            "parameters": ParameterCount(net),
        }
        results[kind]["samples"] = WriteSamples(net, namespace, causal, args.samples, args.L)
        print(f"{kind}: {json.dumps(results[kind], indent=1)}")
        trained[kind] = net
        if kind == "tinydenoiser" and args.write_curve:
            WriteCurve(args.write_curve, losses, args.curve_every, 100, results)

    if {"diffusion", "tinydenoiser"} <= set(models):
        # the two diffusion networks' training steps, timed in alternating rounds in this run
        Seed(args.seed)
        nets = {"my_transformer": ReferenceNamespace()["MyTransformer"](vocab_size).to(device),
                "tinydenoiser": TinyDenoiser(vocab_size).to(device)}
        seconds = TimeSteps(nets, make_batch, diffusion_loss, args.speed_steps)
        tokens = args.batch * args.L
        results["tinydenoiser_speed"] = {
            "steps_timed": args.speed_steps,
            **{f"{name}_tokens_per_second": round(tokens / s) for name, s in seconds.items()},
            "ratio": round(seconds["my_transformer"] / seconds["tinydenoiser"], 2)}
        print(f"tinydenoiser speed: {results['tinydenoiser_speed']['ratio']:.2f}x as fast as "
              f"MyTransformer ({json.dumps(results['tinydenoiser_speed'])})")

    if "gpt" in models:
        results["gpt_speed"] = GPTSpeed(vocab_size, args, device, make_batch)
        speed = results["gpt_speed"]
        print(f"gpt speed: the GPT is {speed['ratio_gpt']:.2f}x as fast as the causal MyTransformer "
              f"({speed['gpt_tokens_per_second']:,} vs {speed['my_transformer_tokens_per_second']:,} "
              f"tokens/s), {speed['ratio_gpt_fast']:.2f}x on the fast path")
    if not {"diffusion", "causal"} & set(models):
        results["load_average"] = [round(x, 2) for x in os.getloadavg()]
        print(json.dumps(results))
        return 0

    # The speed of the page's MyTransformer against the same network with its heads fused.
    namespace = ReferenceNamespace()
    nets = {}
    for name, sdpa in (("heads_one_by_one", None), ("fused_sdpa", True), ("fused_matmul", False)):
        Seed(args.seed)
        net = namespace["MyTransformer"](vocab_size)
        nets[name] = (net if sdpa is None else Fused(net, sdpa=sdpa)).to(device)
    counts = {ParameterCount(net) for net in nets.values()}
    assert len(counts) == 1, "the fused model should have exactly as many parameters"
    seconds = TimeSteps(nets, make_batch, diffusion_loss, args.speed_steps)
    tokens = args.batch * args.L
    results["speed"] = {"parameters": counts.pop(), "steps_timed": args.speed_steps,
                        **{f"{name}_tokens_per_second": round(tokens / s) for name, s in seconds.items()},
                        "ratio": round(seconds["heads_one_by_one"] / seconds["fused_sdpa"], 2),
                        "ratio_fused_matmul": round(seconds["heads_one_by_one"] / seconds["fused_matmul"], 2)}
    print(f"speed: one matrix for all heads + scaled_dot_product_attention is "
          f"{results['speed']['ratio']:.2f}x as fast as the heads one by one "
          f"({tokens / seconds['fused_sdpa']:,.0f} vs {tokens / seconds['heads_one_by_one']:,.0f} "
          f"tokens/s); one matrix with the attention written out: "
          f"{results['speed']['ratio_fused_matmul']:.2f}x")
    results["load_average"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
