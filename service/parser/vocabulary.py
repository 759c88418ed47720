"""The words that name a quantity ("ctx", "users", "mbs", "--tensor-parallel-size"), which
attribute each names, and on which side people write its number.

A phrase is written as lowercase words; in the text its words may be joined by spaces, ``_``,
``-`` or ``/`` (``max_model_len``, ``--max-model-len``, "max model len" are one phrase). Sides:
``B`` the number comes before ("8 users", "48 layers", "4-way tp"), ``A`` after ("bs 8", "tp=4",
"--max-num-seqs 64"), ``E`` either ("32k ctx", "ctx 32k"). A ``B`` phrase still takes a number
after it when ``=`` or ``:`` says so ("users: 8").

The attributes and what their numbers look like are in ``attributes``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

# (attribute, side, phrases separated by commas)
# "2 nodes of 8 h100s": the count before is the nodes, the one after each node's GPUs
_NODES_OF = """
    nodes of, nodes with, node of, machines of, machines with, boxes of, servers of, servers with,
    nodes x, nodes each with, hosts of, hosts with, instances of, instances with, pods of,
    pods with, of those instances, of these instances, of those nodes, of these nodes,
    of those machines, of these machines, of those servers, of these servers, of those boxes,
    of those hosts
"""
_PHRASES: tuple[tuple[str, str, str], ...] = (
    ("seq_len", "E", """
        ctx, context, context length, context len, context window, context size, ctx len, ctx length,
        ctx size, ctx window, seq, seq len, seq length, seqlen, sequence length, sequence len, sequence,
        max model len, max len, max length, max seq len, max seq length, max sequence length,
        max seqlen, max sequence len, cutoff len, block size, model max length, max total tokens,
        window, context length of, token context, tokens of context,
        tokens context, token ctx, tokens ctx, tok ctx, tokens of ctx, token window, token seq,
        token sequences, tokens per sequence, tokens per sample, token sequence, seq length of,
        context lengths, max context, max ctx, max context length, context of, context window of,
        sequences of, seq of, sequence of
    """),
    ("_prompt", "E", """
        prompt, prompts, prompt length, prompt len, input length, input len, input tokens, tokens in,
        max prompt length, token prompts, tokens prompts, token prompt, input, inputs, prompt tokens,
        tokens input, tokens of input
    """),
    ("_prompt", "B", """
        in
    """),
    ("seq_len~k", "B", """
        sequences, seqs, sequence, samples
    """),
    ("_users", "B", """
        users, user, people, ppl, customers, clients, agents, employees, folks
    """),
    ("concurrent", "B", """
        concurrent users, concurrent user, concurrent requests, concurrent request,
        concurrent sequences, concurrent seqs, concurrent streams, concurrent sessions,
        concurrent chats, concurrent conversations, concurrent clients, parallel requests,
        parallel users, parallel sequences, parallel streams, parallel reqs, simultaneous users,
        simultaneous requests, simultaneous sessions, simultaneous, active users, requests, request,
        reqs, sessions, streams, conversations, chats, sequences, seqs,
        requests in parallel, reqs in parallel, in parallel, concurrent reqs,
        concurrent, concurrent connections, connections, at a time, at once, concurrently,
        simultaneously, at the same time, users at a time, users at once, at peak,
        query doc pairs at a time, query doc pairs, pairs at a time, pairs at once,
        queries at a time, queries at once, concurrent queries, queries in parallel,
        docs at a time, documents at a time, in flight, images in flight, requests in flight,
        images at a time, images in flight at a time
    """),
    ("_users_total", "B", """
        daily users, daily active users, dau, daus, monthly users, monthly active users, mau, maus,
        weekly users, weekly active users, total users, users total, users a day, users per day,
        users daily, registered users, users a month, users per month, user base, users overall,
        people a day, people per day, people daily, customers a day, customers per day, users/day,
        users a week, users per week, people a week,
        chats a day, chats per day, chats day, chats daily, conversations a day, conversations per day,
        conversations day, sessions a day, sessions per day, sessions day, requests a day,
        requests per day, requests day, requests daily, queries a day, queries per day, queries day,
        messages a day, messages per day, messages day, tickets a day, tickets per day
    """),
    ("concurrent", "A", """
        concurrency, max concurrent requests, max concurrency,
        num concurrent, concurrent requests, max concurrent, num seqs, max sequences,
        num users
    """),
    # a serving engine's cap (vLLM --max-num-seqs, SGLang --max-running-requests): not a need
    ("max_num_seqs", "A", """
        max num seqs, max running requests, max num sequences
    """),
    ("_batch", "A", """
        batch, batch size, bs, bsz, batch of, decode batch, max batch size, batch sz, batchsize
    """),
    ("micro_batch", "A", """
        micro batch, micro batch size, micro bs, mbs, mbsz, micro bsz, per device batch,
        per device batch size, per device train batch size, per gpu batch, per gpu batch size,
        train micro batch size per gpu, batch size per gpu, batch size per device, batch per gpu,
        batch per device, micro batch size per gpu, microbatch, microbatch size, micro batches,
        per device train bs, mb size, micro batch per gpu, mb, micro
    """),
    ("_per_gpu", "B", """
        per gpu, per device, samples per gpu, sequences per gpu, per card, seqs per gpu, per rank
    """),
    ("global_batch", "E", """
        global batch, global batch size, global bs, gbs, train batch size, effective batch,
        effective batch size, total batch size, global bsz, global batch of
    """),
    ("_grad_accum", "E", """
        grad accum, grad accumulation, gradient accumulation, gradient accumulation steps,
        grad accum steps, accumulation steps, accum steps, ga steps, grad acc, gradient accum,
        accumulation, grad accumulation steps, gradient accumulation step
    """),
    ("_grad_accum", "A", """
        ga, gas
    """),
    ("gpu_count", "B", """
        gpus, gpu, cards, card, devices, accelerators, ranks, of them, of those, of these, of em,
        gpus total, gpus in total, total gpus, of the gpus, more gpus, x gpus, processes,
        way box, way node, way server, way machine, gpu box, gpu node, gpu server, gpu machine
    """),
    ("gpu_count", "A", """
        num gpus, n gpus, gpu count, world size, num processes, ngpus, num devices, number of gpus,
        gpus total, total gpus, gpu num, num gpu
    """),
    ("gpus_per_node", "B", """
        gpus per node, gpus each, gpus per machine, gpus per server, gpus per box, gpus a node,
        gpus per host, per node, gpu per node, cards per node, gpus in each node, gpus on each node,
        each
    """),
    ("gpus_per_node", "A", """
        nproc per node, num gpus per node, gpus per node, nproc
    """),
    ("nodes", "B", """
        nodes, node, machines, machine, servers, server, boxes, box, hosts, instances, pods
    """),
    ("nodes", "B", _NODES_OF),
    ("gpus_per_node", "A", _NODES_OF),
    ("nodes", "A", """
        nnodes, num nodes, num machines, node count, number of nodes, nodes
    """),
    ("virtual_stages", "A", """
        virtual stages, virtual pipeline stages, virtual stages per rank, vpp, vpp size, virtual pp,
        virtual pipeline size, virtual pipeline model parallel size, interleaved stages, chunks per stage,
        num virtual stages per pipeline rank, virtual stages per pipeline rank, model chunks
    """),
    ("shard_group", "B", """
        gpus per shard group, per shard group, gpus per hsdp group, per hsdp group, gpus per shard,
        ranks per shard group
    """),
    ("shard_group", "A", """
        shard group, shard group size, hsdp shard group, hsdp shard size, hsdp group,
        sharding group, sharding group size, shard size
    """),
    # Megatron's --num-layers-per-virtual-pipeline-stage: layers per chunk, not chunks
    ("_layers_per_virtual_stage", "A", """
        num layers per virtual pipeline stage, layers per virtual pipeline stage,
        layers per virtual stage
    """),
    ("tp", "A", """
        tp, tensor parallel, tensor parallelism, tensor parallel size, tensor model parallel size,
        tp size, tensor parallel degree, tp degree, tensor model parallel, tensor, tensor par,
        tensor parallel of, num shard, tensor parallelism of, tp of, model parallel size
    """),
    ("pp", "A", """
        pp, pipeline parallel, pipeline parallelism, pipeline parallel size,
        pipeline model parallel size, pp size, pipeline, pp degree, pipeline model parallel,
        pipeline parallel degree, pipeline parallelism of, pipe parallel size, pipe parallel
    """),
    ("pp", "B", """
        pp stages, pipeline stages, pipeline stage, stages, stage pipeline, stage pp
    """),
    ("tp", "B", """
        way tensor parallel, way tensor parallelism, way tp, way tensor, tp ways, way tensor model parallel
    """),
    ("pp", "B", """
        way pipeline parallel, way pipeline parallelism, way pp, way pipeline
    """),
    ("_dp", "B", """
        way data parallel, way data parallelism, way dp
    """),
    ("cp", "A", """
        cp, context parallel, context parallelism, context parallel size, cp size,
        context parallel degree, sequence parallel, sequence parallelism, sequence parallel size,
        sequence parallel degree, ulysses, ulysses degree, ulysses sp, ring attention size,
        ring attention degree
    """),
    ("ep", "A", """
        ep, expert parallel, expert parallelism, expert parallel size, expert model parallel size,
        ep size, expert parallel degree
    """),
    ("_dp", "A", """
        dp, data parallel, data parallelism, data parallel size, dp size, dp degree, replicas, replica,
        data parallel degree
    """),
    ("lora_rank", "A", """
        r, rank, lora r, lora rank, lora dim, adapter rank, lora rank of, rank of, max lora rank
    """),
    ("lora_slots", "A", """
        max loras, max lora, max loras of
    """),
    ("lora_slots", "B", """
        adapters, lora adapters, loras, adapters at once, loras at once, adapters loaded
    """),
    ("tokens", "B", """
        tokens, token, toks, tok, training tokens, train tokens, tokens of data, tokens of text,
        tokens of training data, token dataset, tokens dataset
    """),
    ("tokens", "A", """
        num tokens, train tokens, total tokens, dataset tokens, dataset size, training tokens,
        token budget
    """),
    ("_tflops", "B", """
        tflops per gpu, tflop/s per gpu, tflops/gpu, tflop/s/gpu, tflops a gpu, tflops per device,
        tflops per chip, tflops each, tflops per card, tflops/s per gpu, achieved tflops,
        model tflops per gpu, tflops of model flops per gpu
    """),
    ("mfu", "E", """
        mfu, model flops utilization, model flops utilisation, flops utilization, mfu of,
        model flop utilization, mfu target, target mfu, mfu target of, target mfu of, mfu goal
    """),
    ("memory_headroom", "A", """
        gpu memory utilization, gpu mem util, gpu memory util, mem fraction static, mem fraction,
        memory utilization, gpu memory utilisation, gpu mem utilization, gpu util
    """),
    ("price_per_gpu_hour", "B", """
        per hour, per hr, an hour, a hour, hourly, per gpu hour, per gpu hr, gpu hour, gpu hr, h, hr,
        hour, per gpu per hour, gpu h, per gpu h, hrs, hours,
        per node per hour, per node hour, per instance per hour, per instance hour,
        per server per hour, per server hour, per machine per hour, per vm per hour
    """),
    ("price_per_gpu_hour", "A", """
        price, price per gpu hour, price per hour, cost per hour, rate
    """),
    ("_epochs", "B", """
        epochs, epoch, passes
    """),
    ("_epochs", "A", """
        num epochs, num train epochs, epochs, epoch count
    """),
    ("_batch_tokens", "B", """
        token batches, token batch, tokens per batch, token global batch, tokens per step,
        token batch size, tokens per global batch
    """),
    ("_output", "B", """
        tokens of output, tokens output, output tokens each, tokens of generation, generated tokens,
        new tokens, tokens out, out, output each, outputs each
    """),
    ("_output", "E", """
        output tokens, max new tokens, new tokens, output length, output len, generation length,
        max tokens, completion tokens, tokens out, output, outputs, generation, completion,
        completions, response length, responses, answers, answer length, replies, reply length,
        reasoning outputs, reasoning tokens, token answers, tokens answers, token responses,
        tokens responses, token replies, token outputs, tokens outputs, token completions
    """),
    ("arch.layers", "E", """
        layers, layer, num layers, n layers, num hidden layers, depth, blocks, transformer layers,
        transformer blocks, n layer, nlayers
    """),
    ("arch.hidden", "E", """
        hidden, hidden size, hidden dim, d model, dmodel, model dim, n embd, embedding dim, embed dim,
        width, hidden dimension
    """),
    ("arch.heads", "E", """
        heads, attention heads, num heads, n heads, num attention heads, query heads, attn heads,
        n head, q heads
    """),
    ("arch.kv_heads", "E", """
        kv heads, num kv heads, key value heads, num key value heads, query groups, num query groups,
        gqa groups, gqa, n kv heads, kv head, kv groups
    """),
    ("arch.ffn", "E", """
        ffn, ffn dim, ffn hidden size, ffn size, intermediate size, intermediate, d ff, mlp dim,
        mlp size, mlp hidden, ffn hidden
    """),
    ("arch.vocab", "E", """
        vocab, vocab size, vocabulary, vocabulary size, padded vocab size, token vocab, vocab of
    """),
    ("arch.experts", "E", """
        experts, num experts, num local experts, routed experts, n experts, n routed experts
    """),
    ("arch.top_k", "E", """
        top k, topk, experts per token, active experts per token, num experts per tok, moe router topk,
        experts per tok, active experts, top
    """),
    ("arch.expert_ffn", "E", """
        expert ffn, moe intermediate size, moe ffn hidden size, expert ffn size,
        expert intermediate size
    """),
    ("unused.setting", "A", """
        learning rate, lr, seed, port, warmup steps, warmup ratio, logging steps, save steps,
        eval steps, save total limit, weight decay, max grad norm, lora alpha, lora dropout, alpha,
        dropout, temperature, top p, num workers, dataloader num workers, per device eval batch size,
        eval batch size, max num batched tokens, swap space, num beams, max steps, warmup, logging,
        save, eval, num train samples, gpu memory, val set size, num gpu blocks override,
        lr warmup iters, log interval, save interval, eval interval, eval iters, train iters,
        lr decay iters, min lr, clip grad, adam beta1, adam beta2, adam eps, init method std,
        hidden dropout, attention dropout, beta1, beta2, eps, cuda visible devices,
        micro batch size eval, rope theta, max position embeddings, rope scaling factor, torch compile
    """),
    ("unused.setting", "A", """
        gradient clipping, grad clip, clip grad norm, overlap comm, reduce bucket size, allgather bucket size,
        stage3 prefetch bucket size, stage3 param persistence threshold, stage3 max live parameters,
        stage3 max reuse distance, sub group size, steps per print, loss scale, initial scale power,
        loss scale window, hysteresis, min loss scale, max input length, max input tokens,
        max batch prefill tokens, max batch total tokens, waiting served ratio, max waiting tokens,
        evals per epoch, saves per epoch, num proc, dataloader num workers, preprocessing num workers,
        lora fan in fan out, early stopping patience, rdzv, master port, nccl timeout, timeout
    """),
    ("unsupported.time", "B", """
        days, day, hours, weeks, week, months, month, minutes, mins, seconds, secs, hrs, years, h, hr,
        hour
    """),
    ("unsupported.gpu_hours", "B", """
        gpu hours, gpu hrs, gpu days, gpu h
    """),
    ("unsupported.throughput", "B", """
        tokens s, tok s, tokens per second, tok sec, tps, qps, rps, requests per second, req s,
        tokens sec, requests s, qpm, rpm
    """),
    ("_steps", "B", """
        steps, step, iterations, iters
    """),
    ("unsupported.host_memory", "B", """
        ram, of ram, system ram, cpu ram, system memory, host memory, of system ram, unified memory,
        ddr4, ddr5, memory ram, dram
    """),
    ("unsupported.budget", "E", """
        budget, total budget, credits, in credits
    """),
)


@dataclass(frozen=True, slots=True)
class Cue:
    """One phrase's readings: (attribute, side) pairs; a few phrases name more than one
    attribute ("gpu hours": a price after "$2.50", a budget after "5000")."""

    readings: tuple[tuple[str, str], ...]


@cache
def phrases() -> dict[tuple[str, ...], Cue]:
    """Phrase words -> its cue (built once)."""
    table: dict[tuple[str, ...], list[tuple[str, str]]] = {}
    for attribute, side, texts in _PHRASES:
        for text in (t.strip() for t in texts.split(",")):
            readings = table.setdefault(tuple(text.split()), [])
            if (attribute, side) not in readings:
                readings.append((attribute, side))
    return {k: Cue(tuple(v)) for k, v in table.items()}


@cache
def longest_phrase() -> int:
    return max(len(k) for k in phrases())


@cache
def phrase_heads() -> frozenset[str]:
    """The first word of every phrase: other words need no lookup."""
    return frozenset(k[0] for k in phrases())
