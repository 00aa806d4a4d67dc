"""The engine: model + tokenizer + managed cache + its own decode loop.

Positions: every forward passes ``position_ids`` continuing from the *logical* length and
``cache_position`` over the *physical* slots, so slots removed by compression leave harmless gaps
(keys are cached after RoPE). Prefill runs in chunks keeping only the last logits.
"""

from __future__ import annotations

import contextlib
import copy
import resource
import signal
import threading
import time
from dataclasses import dataclass

import torch

from codeagent.errors import InputError
from codeagent.kvcache import attention
from codeagent.kvcache.chat import ChatFormat
from codeagent.kvcache.config import KVConfig, ModelConfig
from codeagent.kvcache.models import LoadedModel
from codeagent.kvcache.named import issue_names, naming_mask
from codeagent.kvcache.slots import SlotTable
from codeagent.kvcache.state import CacheState
from codeagent.kvcache.tags import NO_TAG, SegmentKind, SpanInfo, TokenTag
from codeagent.kvcache.uses import bindings, count, line_keys, module_calls
from codeagent.protocols import Generation, KVStats, TokenCallback, TokenScore


@dataclass(frozen=True)
class Mark:
    """A point to roll the cache back to (only tokens appended after it are removed)."""

    slots: int
    logical: int
    logits: torch.Tensor | None
    segments: int


@dataclass(frozen=True)
class Snapshot:
    """A deep copy of the engine's ``CacheState`` (all that appends, generations and compressions
    change); restores any number of times."""

    state: CacheState

    @property
    def logical(self) -> int:
        """Logical length when the snapshot was taken."""
        return self.state.logical


@dataclass(frozen=True)
class MessageTokens:
    """One chat message as ``append_message`` feeds it: template head, content, template tail."""

    head: list[int]
    body: list[int]
    offsets: list[tuple[int, int]]
    """Character offsets of ``body`` tokens within the content."""
    tail: list[int]

    @property
    def ids(self) -> list[int]:
        """All the message's token ids in order."""
        return self.head + self.body + self.tail


class _StateField:
    """An engine attribute that reads and writes the field of the same name on ``engine.state``."""

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, engine, owner=None):
        return self if engine is None else getattr(engine.state, self.name)

    def __set__(self, engine, value) -> None:
        setattr(engine.state, self.name, value)


class Engine:
    """A causal LM with a slot-tracked KV cache, chunked prefill and sampling."""

    def __init__(self, loaded: LoadedModel, model_cfg: ModelConfig | None = None, kv_cfg: KVConfig | None = None,
                 manager=None) -> None:
        from transformers import DynamicCache

        self.model = loaded.model
        self.tok = loaded.tokenizer
        self.model_cfg = model_cfg or ModelConfig()
        self.kv_cfg = kv_cfg or KVConfig()
        if self.model_cfg.threads:
            torch.set_num_threads(self.model_cfg.threads)
        self.model.set_attn_implementation(attention.register())
        cfg = self.model.config
        self.n_layers = cfg.num_hidden_layers
        self.n_heads = cfg.num_attention_heads
        self.max_context = int(getattr(cfg, "max_position_embeddings", 8192))
        self.chat = ChatFormat(self.tok)
        self._cache_cls = DynamicCache
        self.stop_ids = self._stop_ids()
        if manager is None:
            from codeagent.kvcache.manager import KVManager

            manager = KVManager(self.kv_cfg)
        self.manager = manager
        self._tagger = None
        self._eol: dict[int, bool] = {}
        self.state: CacheState
        self.reset()

    # ----------------------------------------------------------------------- state
    def reset(self) -> None:
        """Empty the cache and all accounting."""
        self.state = CacheState(cache=self._cache_cls(config=self.model.config),
                                table=SlotTable(self.n_layers, self.n_heads))
        self._interrupt = False

    def snapshot(self) -> Snapshot:
        """Deep-copy the cache state (tensors are cloned)."""
        return Snapshot(copy.deepcopy(self.state))

    def restore(self, snap: Snapshot, manager=None) -> None:
        """Return to ``snap``'s state (copying again, so one snapshot serves many restores);
        ``manager`` replaces the engine's manager (e.g. one with another policy)."""
        self.state = copy.deepcopy(snap.state)
        if manager is not None:
            self.manager = manager
        self._interrupt = False

    cache = _StateField("The KV cache (a transformers ``DynamicCache``).")
    table = _StateField("The slot table beside the cache.")
    logical = _StateField("Logical length: tokens read so far, dropped ones included.")
    steps = _StateField("Forward passes so far.")
    segments = _StateField("Segments (messages, generations) appended so far.")
    subtasks = _StateField("Subtask name -> index.")
    last_logits = _StateField("Logits after the last token.")
    peak_slots = _StateField("Most physical slots held at once.")

    @property
    def tagger(self):
        """The structure tagger, created on first use."""
        if self._tagger is None:
            from codeagent.kvcache.tagger import StructureTagger

            self._tagger = StructureTagger()
        return self._tagger

    def _stop_ids(self) -> set[int]:
        ids = set()
        eos = self.model.config.eos_token_id
        ids.update(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        for t in ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end|>"):
            tid = self.tok.convert_tokens_to_ids(t)
            if isinstance(tid, int) and tid != getattr(self.tok, "unk_token_id", None) and tid >= 0:
                ids.add(tid)
        return ids

    def subtask_index(self, name: str | None) -> int:
        """Stable small integer for a subtask name (-1 for none)."""
        return self.state.subtask_index(name)

    # ----------------------------------------------------------------------- forward
    def _forward(self, ids: list[int], all_logits: bool = False) -> torch.Tensor:
        """Run ``ids`` through the model after the cached slots (table rows must already exist)."""
        n = len(ids)
        phys = len(self.table) - n
        pos = self.table["pos"][phys:].unsqueeze(0)
        log_count = self.table.log_count()
        if log_count is not None:
            log_count = log_count.to(self.model.device)
        ctx = attention.AttentionContext(log_count=log_count, window=self.model_cfg.obs_window,
                                         sample=self.model_cfg.stats_queries,
                                         collect=self.manager.policy.needs_attention)
        with torch.inference_mode():
            out = self.model(
                input_ids=torch.tensor([ids], dtype=torch.long, device=self.model.device),
                position_ids=pos.to(self.model.device),
                cache_position=torch.arange(phys, phys + n, device=self.model.device),
                past_key_values=self.cache,
                use_cache=True,
                logits_to_keep=0 if all_logits else 1,
                codeagent=ctx,
            )
        self.steps += 1
        self._accumulate(ctx)
        logits = out.logits[0].float()
        self.last_logits = logits[-1]
        self.peak_slots = max(self.peak_slots, len(self.table))
        return logits

    def _accumulate(self, ctx: attention.AttentionContext) -> None:
        """Hand this forward's attention mass to the slot table, on the device it was computed on."""
        if not ctx.mass:
            return
        dev = ctx.mass[0].device  # layers may sit on several devices (device_map): gather on the first
        mass = torch.stack([ctx.mass[i].to(dev) for i in range(self.n_layers)]).float()  # [L, H, T]
        obs = torch.stack([ctx.obs[i].to(dev) for i in range(self.n_layers)]).float()
        self.table.accumulate(mass, obs, ctx.queries, ctx.obs_queries, self.kv_cfg.attn_decay, self.steps)

    def _add_rows(self, ids: list[int], tags: list[TokenTag], kinds: list[SegmentKind], info: SpanInfo,
                  protect: list[bool] | None = None, names: list[str | None] | None = None,
                  named: list[bool] | None = None, lines: list[int] | None = None,
                  spells: list[bool] | None = None) -> None:
        n = len(ids)
        self.table.extend(
            n,
            pos=torch.arange(self.logical, self.logical + n),
            token=torch.tensor(ids, dtype=torch.long),
            seg=self.segments,
            kind=torch.tensor([int(k) for k in kinds], dtype=torch.int8),
            subtask=self.subtask_index(info.subtask),
            block_type=torch.tensor([int(t.block_type) for t in tags], dtype=torch.int8),
            block_id=torch.tensor([t.block_id for t in tags], dtype=torch.long),
            depth=torch.tensor([t.depth for t in tags], dtype=torch.int16),
            boundary=torch.tensor([t.is_boundary for t in tags], dtype=torch.bool),
            eol=torch.tensor([t.ends_line or self._ends_line(i) for i, t in zip(ids, tags)], dtype=torch.bool),
            protect=info.pinned if protect is None else torch.tensor(protect, dtype=torch.bool),
            named=False if named is None else torch.tensor(named, dtype=torch.bool),
            name=-1 if names is None else torch.tensor(self.state.name_ids(names), dtype=torch.long),
            spells=False if spells is None else torch.tensor(spells, dtype=torch.bool),
            line=-1 if lines is None else torch.tensor(lines, dtype=torch.long),
        )
        self.logical += n

    def _ends_line(self, token_id: int) -> bool:
        """Whether the token's text holds a newline (memoised per id; line units of the policies)."""
        hit = self._eol.get(token_id)
        if hit is None:
            hit = self._eol[token_id] = "\n" in self.tok.decode([token_id])
        return hit

    def append_tokens(self, ids: list[int], tags: list[TokenTag] | None = None, info: SpanInfo | None = None,
                      kinds: list[SegmentKind] | None = None, compress: bool = True,
                      protect: list[bool] | None = None, names: list[str | None] | None = None,
                      named: list[bool] | None = None, lines: list[int] | None = None,
                      spells: list[bool] | None = None) -> int:
        """Prefill token ids (chunked), tagged, letting the manager make room first; ``protect`` marks single
        tokens to keep verbatim (default: all or none, as ``info.pinned`` says); ``names``: per token, the
        name its definition header binds (``uses.defined_names``); ``named``: per token, whether it belongs to
        a definition the issue names (``named.naming_mask``); ``lines``: per token, its line's key
        (``uses.line_keys``); ``spells``: per token, whether it spells its definition's name (``uses.spelled``)."""
        info = info or SpanInfo()
        n = len(ids)
        if n == 0:
            return 0
        if self.logical + n > self.max_context:
            raise InputError(
                f"context past the model limit: {self.logical + n} tokens > {self.max_context} positions"
            )
        tags = tags or [NO_TAG] * n
        kinds = kinds or [info.kind] * n
        chunk = self.manager.chunk_size(self.state, self.model_cfg.prefill_chunk) if compress else self.model_cfg.prefill_chunk
        for s in range(0, n, chunk):
            part = ids[s:s + chunk]
            if compress:
                self.manager.before_append(self.state, len(part))
            self._add_rows(part, tags[s:s + chunk], kinds[s:s + chunk], info,
                           None if protect is None else protect[s:s + chunk],
                           None if names is None else names[s:s + chunk],
                           None if named is None else named[s:s + chunk],
                           None if lines is None else lines[s:s + chunk],
                           None if spells is None else spells[s:s + chunk])
            self.manager.pin_rows(self.state, len(part))
            self._forward(part)
        self.segments += 1
        self.manager.after_append(self.state, n, info, compress)
        return n

    def _encode(self, text: str, content: bool = False) -> tuple[list[int], list[tuple[int, int]]]:
        """Token ids and char offsets. Content (file views, tool output, user text) never yields
        control tokens: a literal ``<|im_end|>`` or ``<FILL_ME>`` in a file is read as plain text."""
        enc = self.tok(text, add_special_tokens=False, return_offsets_mapping=True, split_special_tokens=content)
        return list(enc["input_ids"]), [tuple(o) for o in enc["offset_mapping"]]

    def append(self, text: str, info: SpanInfo | None = None, compress: bool = True) -> int:
        """Prefill raw text (no chat template, read as plain text), structure-tagged as ``info`` says."""
        info = info or SpanInfo()
        ids, offsets = self._encode(text, content=True)
        tags = self.tagger.tag(text, offsets, info) if ids else []
        names, spells = self._names(text, offsets, tags)
        return self.append_tokens(ids, tags, info, compress=compress, protect=info.protected(offsets), names=names,
                                  named=self._named(text, offsets, tags, info), lines=self._lines(text, offsets, tags),
                                  spells=spells)

    def encode_message(self, role: str, content: str, first: bool | None = None) -> MessageTokens:
        """Tokenize one chat message exactly as ``append_message`` would: the template's head and tail
        may hold control tokens, the content never does. ``first``: whether it opens the context
        (default: whether the engine is empty)."""
        piece = self.chat.piece(role, content, first=self.logical == 0 if first is None else first)
        head, _ = self._encode(piece.text[: piece.start])
        body, offsets = self._encode(content, content=True)
        tail, _ = self._encode(piece.text[piece.end:])
        return MessageTokens(head, body, offsets, tail)

    def _names(self, text: str, offsets: list[tuple[int, int]], tags: list[TokenTag]
               ) -> tuple[list[str | None], list[bool]]:
        """Count the identifiers ``text`` uses and the definitions it holds; per token, the name its definition
        header binds and whether it spells it (``uses.bindings``)."""
        names, defs, spells = bindings(text, offsets, tags)
        self.state.uses.update(count(text))
        self.state.defs.update(defs)
        return names, spells

    def _lines(self, text: str, offsets: list[tuple[int, int]], tags: list[TokenTag]) -> list[int]:
        """Per token, its line's key (``uses.line_keys``); each line counted in the session's line texts, its
        identifiers kept, and the lines that open a module-level call noted (``uses.module_calls``: ``Lifecycle``
        pins a use among the lines written twice and those)."""
        keys, counts, words = line_keys(text, offsets)
        self.state.lines.update(counts)
        self.state.module_calls |= module_calls(text, offsets, keys, tags)
        self.state.line_words.update(words)
        return keys

    def _named(self, text: str, offsets: list[tuple[int, int]], tags: list[TokenTag], info: SpanInfo
               ) -> list[bool] | None:
        """Per token: whether it belongs to a definition the issue names (None: no token does). An issue span
        adds the names it mentions."""
        if info.kind == SegmentKind.ISSUE:
            self.state.named |= issue_names(text)
            return None
        cfg = self.manager.cfg
        return naming_mask(text, offsets, tags, self.state.named, cfg.pin_named_body) if cfg.pin_named else None

    def append_message(self, role: str, content: str, info: SpanInfo | None = None, compress: bool = True) -> int:
        """Render one chat message with the template and prefill it; scaffolding is tagged TEMPLATE."""
        info = info or SpanInfo()
        msg = self.encode_message(role, content)
        head, body, tail = msg.head, msg.body, msg.tail
        body_tags = self.tagger.tag(content, msg.offsets, info) if body else []
        ids = msg.ids
        tags = [NO_TAG] * len(head) + body_tags + [NO_TAG] * len(tail)
        kinds = [SegmentKind.TEMPLATE] * len(head) + [info.kind] * len(body) + [SegmentKind.TEMPLATE] * len(tail)

        def framed(mask: list[bool] | None) -> list[bool] | None:
            """A per-token mask of the body (None: none) over the whole message, the scaffolding False."""
            return None if mask is None else [False] * len(head) + mask + [False] * len(tail)

        body_names, body_spells = self._names(content, msg.offsets, body_tags)
        names = [None] * len(head) + body_names + [None] * len(tail)
        lines = [-1] * len(head) + self._lines(content, msg.offsets, body_tags) + [-1] * len(tail)
        return self.append_tokens(ids, tags, info, kinds=kinds, compress=compress, names=names, lines=lines,
                                  protect=framed(info.protected(msg.offsets)),
                                  named=framed(self._named(content, msg.offsets, body_tags, info)),
                                  spells=framed(body_spells))

    def start_assistant(self, info: SpanInfo | None = None, compress: bool = True) -> int:
        """Append the template's generation prompt (e.g. ``<|im_start|>assistant\\n``)."""
        info = info or SpanInfo()
        ids, _ = self._encode(self.chat.generation_prompt)
        return self.append_tokens(ids, None, info, kinds=[SegmentKind.TEMPLATE] * len(ids), compress=compress)

    def end_assistant(self, info: SpanInfo | None = None) -> int:
        """Close the assistant message after a generation (the end-of-turn scaffolding)."""
        info = info or SpanInfo()
        ids, _ = self._encode(self.chat.close("assistant"))
        return self.append_tokens(ids, None, info, kinds=[SegmentKind.TEMPLATE] * len(ids))

    # ----------------------------------------------------------------------- decoding
    def _sample(self, logits: torch.Tensor, temperature: float, top_p: float, gen: torch.Generator | None) -> int:
        if temperature <= 0:
            return int(torch.argmax(logits))
        probs = torch.softmax(logits / temperature, dim=-1)
        if top_p < 1.0:
            sp, si = torch.sort(probs, descending=True)
            cut = torch.cumsum(sp, 0) - sp > top_p
            sp[cut] = 0
            probs = torch.zeros_like(probs).scatter_(0, si, sp)
            probs /= probs.sum()
        return int(torch.multinomial(probs, 1, generator=gen))

    @contextlib.contextmanager
    def _defer_sigint(self):
        """While decoding, Ctrl-C sets a flag checked between tokens, so the cache stays whole."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        prev = signal.getsignal(signal.SIGINT)

        def handler(signum, frame):
            self._interrupt = True

        signal.signal(signal.SIGINT, handler)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, prev)

    def interrupt(self) -> None:
        """Ask a running ``generate`` to stop after the current token."""
        self._interrupt = True

    def generate(self, max_new_tokens: int = 256, *, stop: list[str] | None = None, temperature: float = 0.0,
                 top_p: float = 1.0, seed: int | None = None, on_token: TokenCallback | None = None,
                 info: SpanInfo | None = None) -> Generation:
        """Decode from the cache. Generated tokens stay cached, tagged ``info``; EOS is not cached.

        The text ends at (and includes) the first stop string. Streaming gets text deltas.
        """
        if self.last_logits is None:
            raise InputError("nothing to continue from: append a prompt first")
        info = info or SpanInfo()
        gen = torch.Generator(device=self.last_logits.device).manual_seed(seed) if seed is not None else None
        stop = [s for s in (stop or []) if s]
        ids: list[int] = []
        text, emitted = "", 0
        reason = "length"
        start = self.logical
        t0 = time.perf_counter()
        self._interrupt = False
        every = self.kv_cfg.score_update_freq
        with self._defer_sigint():
            for _ in range(max_new_tokens):
                if self._interrupt:
                    reason = "interrupted"
                    break
                tid = self._sample(self.last_logits, temperature, top_p, gen)
                if tid in self.stop_ids:
                    reason = "eos"
                    break
                if self.logical + 1 > self.max_context:
                    reason = "context"
                    break
                ids.append(tid)
                self.manager.before_append(self.state, 1)
                self._add_rows([tid], [NO_TAG], [info.kind], info)
                self._forward([tid])
                if len(ids) % every == 0:
                    self.manager.on_decode(self.state, len(ids))
                text = self.tok.decode(ids, skip_special_tokens=False)
                hit = min((text.find(s) + len(s) for s in stop if s in text), default=-1)
                if hit >= 0:
                    text = text[:hit]
                    reason = "stop"
                if on_token and not text.endswith("\ufffd") and len(text) > emitted:
                    on_token(text[emitted:])
                    emitted = len(text)
                if reason == "stop":
                    break
        self._interrupt = False
        self.state.uses.update(count(text))
        self.segments += 1
        if on_token and len(text) > emitted and not text.endswith("\ufffd"):
            on_token(text[emitted:])
        return Generation(text=text, token_ids=ids, finish_reason=reason, decode_s=time.perf_counter() - t0,
                          start_position=start)

    def retag(self, gen: Generation, spans: list[tuple[int, int, SpanInfo]]) -> int:
        """Re-tag cached tokens of ``gen`` whose text falls in each (start, end, info) char span.

        Returns how many cached slots changed. Tokens already merged or dropped are skipped.
        """
        if not gen.token_ids:
            return 0
        offsets, prev = [], 0
        for i in range(len(gen.token_ids)):
            cur = len(self.tok.decode(gen.token_ids[: i + 1], skip_special_tokens=False))
            offsets.append((prev, cur))
            prev = cur
        full = self.tok.decode(gen.token_ids, skip_special_tokens=False)
        pos = self.table["pos"]
        changed = 0
        for s, e, info in spans:
            sub = full[s:e]
            local = [(max(a - s, 0), max(min(b, e) - s, 0)) for a, b in offsets]
            tags = self.tagger.tag(sub, local, info)
            found, defs, spells = bindings(sub, local, tags)
            self.state.defs.update(defs)
            names = self.state.name_ids(found)
            for i, ((a, b), t) in enumerate(zip(offsets, tags)):
                if not (a >= s and b <= e and b > a):
                    continue
                where = (pos == gen.start_position + i).nonzero()
                if where.numel() == 0:
                    continue
                j = int(where[0, 0])
                c = self.table.cols
                c["kind"][j] = int(info.kind)
                c["subtask"][j] = self.subtask_index(info.subtask)
                c["block_type"][j] = int(t.block_type)
                c["block_id"][j] = t.block_id
                c["depth"][j] = t.depth
                c["boundary"][j] = t.is_boundary
                c["protect"][j] = info.pinned
                c["name"][j] = names[i]
                c["spells"][j] = spells[i]
                c["eol"][j] = t.ends_line or self._ends_line(gen.token_ids[i])
                changed += 1
        rows = (pos >= gen.start_position).nonzero()
        if rows.numel():
            self.manager.after_retag(self.state, int(rows[0, 0]))
        return changed

    # ----------------------------------------------------------------------- scoring helpers
    def score(self, ids: list[int], info: SpanInfo | None = None) -> tuple[list[float], list[int]]:
        """Teacher-forced log-prob of each token of ``ids`` and the argmax prediction at each step.

        The tokens are appended (never compressed); roll back with ``mark``/``rollback``.
        """
        logp, target = self._teacher_forced(ids, info)
        return logp.gather(1, target[:, None])[:, 0].tolist(), logp.argmax(dim=-1).tolist()

    def score_text(self, text: str, info: SpanInfo | None = None, alternatives: int = 3) -> list[TokenScore]:
        """Teacher-force ``text``: per token its characters, log-prob and the ``alternatives`` likeliest other
        tokens at that step with their log-probs. Under a budget the cache makes room for ``text`` first, so scoring
        never holds more slots than the budget (the scored tokens themselves are not compressed)."""
        ids, offsets = self._encode(text, content=True)
        if not ids:
            return []
        self.manager.before_append(self.state, len(ids))
        logp, target = self._teacher_forced(ids, info)
        lp = logp.gather(1, target[:, None])[:, 0].tolist()
        top_lp, top = logp.topk(alternatives + 1, dim=-1)
        out = []
        for (a, b), p, tid, row, row_lp in zip(offsets, lp, ids, top.tolist(), top_lp.tolist()):
            alts = tuple((self.tok.decode([t]), q) for t, q in zip(row, row_lp) if t != tid)[:alternatives]
            out.append(TokenScore(a, b, p, alts))
        return out

    def _teacher_forced(self, ids: list[int], info: SpanInfo | None) -> tuple[torch.Tensor, torch.Tensor]:
        """Append ``ids`` uncompressed; the log-probs before each token ``[len(ids), vocab]`` and ``ids`` as a tensor."""
        if self.last_logits is None:
            raise InputError("nothing to score from: append a prompt first")
        info = info or SpanInfo()
        first = self.last_logits
        self._add_rows(ids, [NO_TAG] * len(ids), [info.kind] * len(ids), info)
        logits = self._forward(ids, all_logits=True)
        logp = torch.log_softmax(torch.cat([first[None], logits[:-1]]), dim=-1)
        return logp, torch.tensor(ids, device=logp.device)

    def mark(self) -> Mark:
        """Remember the current end of the cache."""
        return Mark(len(self.table), self.logical, self.last_logits, self.segments)

    def rollback(self, mark: Mark) -> None:
        """Remove every slot appended after ``mark`` (no compression may have happened since)."""
        if len(self.table) < mark.slots:
            raise InputError("cannot roll back: the cache was compressed after the mark")
        from codeagent.kvcache.ops import gather

        gather(self.cache, self.table, torch.arange(mark.slots))
        self.logical, self.last_logits, self.segments = mark.logical, mark.logits, mark.segments

    # ----------------------------------------------------------------------- control
    def commit(self, subtask: str) -> int:
        """The agent finished ``subtask``: its spans become committed and get compressed."""
        return self.manager.commit(self.state, subtask)

    def set_debug(self, subtask: str | None) -> None:
        """Open (pin error lines) or close a debug round."""
        self.manager.set_debug(self.state, subtask)

    def kv_bytes(self) -> int:
        """Bytes held by the cache tensors, all layers, keys and values."""
        total = 0
        for layer in self.cache.layers:
            k = getattr(layer, "keys", None)
            if k is not None and k.numel():
                total += k.numel() * k.element_size() + layer.values.numel() * layer.values.element_size()
        return total

    def bytes_per_slot(self) -> int:
        """KV bytes one slot takes across all layers."""
        cfg = self.model.config
        head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        elem = torch.finfo(self.model.dtype).bits // 8
        return self.n_layers * 2 * cfg.num_key_value_heads * head_dim * elem

    def stats(self) -> KVStats:
        """Current accounting of the cache."""
        from codeagent.kvcache.tags import State

        state = self.table["state"]
        kind = self.table["kind"]
        by_state = {s.name.lower(): int((state == s).sum()) for s in State}
        by_kind = {k.name.lower(): int((kind == k).sum()) for k in SegmentKind if int((kind == k).sum())}
        c = self.state.counters
        return KVStats(
            physical_slots=len(self.table),
            logical_tokens=self.logical,
            kv_bytes=self.kv_bytes(),
            budget_slots=self.manager.budget(self.state),
            by_state=by_state,
            by_kind=by_kind,
            merged_slots=int((self.table["count"] > 1).sum()),
            merges=c.merged_tokens,
            drops=c.dropped_tokens,
            commits=c.commits,
            compressions=c.compressions,
            peak_slots=self.peak_slots,
            peak_rss_bytes=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            compress_s=c.compress_s,
        )
