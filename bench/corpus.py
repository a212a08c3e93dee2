"""A deterministic corpus of mixed English and Chinese memories with frontmatter.

    from bench.corpus import generate
    paths = generate(root, 10_000, seed=0)   # the same files, byte for byte, every time

or ``python bench/corpus.py DIR N [--seed S]``. Words follow a Zipf-like
distribution (a few common, many rare), about half of the memories mix in
Chinese sentences, 5% are pinned, 1% are superseded, ages spread over the three
years before the corpus's "now", one English word in seven is inflected
(``deploys``, ``deployed``, ``deploying``), and every file's mtime is its
``updated`` time, as if it had been written then. :func:`hit_counts` gives the
recall counts a user's ``.state.json`` would hold (a fifth of the memories, long-tailed).
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
from pathlib import Path

BASE_MS = 1_790_000_000_000  # a fixed "now" so the bytes never depend on the clock
DAY_MS = 86_400_000
KINDS = {
    "rules": "rule",
    "preferences": "preference",
    "decisions": "decision",
    "pitfalls": "pitfall",
    "facts": "fact",
}


def _split(text: str) -> list[str]:
    return text.split()


PER_FOLDER = 1000  # files per sub-folder, so no folder holds 20k files

EN = _split(
    """
deploy script lockfile pnpm npm yarn node python rust golang docker kubernetes helm
terraform ansible nginx redis postgres sqlite mysql kafka rabbitmq grpc http rest graphql
websocket cache index query schema migration transaction rollback commit branch merge
rebase conflict review test fixture mock coverage lint format typecheck build release
version tag changelog pipeline runner workflow secret token credential permission role
policy audit log metric trace alert latency throughput timeout retry backoff circuit
breaker queue worker scheduler cron batch stream buffer memory leak heap stack thread
process signal socket port proxy gateway tls certificate dns route firewall vpc subnet
cluster node pod container image registry volume mount backup restore snapshot replica
shard partition consistency quorum leader election lock mutex deadlock race condition
ordering idempotent checksum hash encoding unicode utf8 locale timezone epoch parser
tokenizer compiler linker bundler webpack vite eslint prettier ruff mypy pytest jest
frontend backend api client server session cookie header cors csrf oauth jwt login signup
payment invoice order cart checkout inventory search ranking recall snippet bigram fts5
bm25 daemon watcher inotify fsevents polling debounce sync push pull remote origin
upstream fork config yaml json toml env flag option default override fallback feature
rollout canary
"""
)

ZH = _split(
    """
部署 脚本 配置 依赖 接口 数据库 索引 查询 缓存 事务 回滚 提交 分支 合并
冲突 评审 测试 覆盖率 构建 发布 版本 流水线 密钥 权限 角色 审计 日志 指标
告警 延迟 吞吐 超时 重试 队列 调度 批处理 内存 泄漏 线程 进程 信号 端口
代理 网关 证书 路由 防火墙 集群 节点 容器 镜像 备份 恢复 快照 副本 分片
一致性 选举 死锁 竞态 幂等 校验 编码 时区 解析 分词 编译 打包 前端 后端
客户端 服务端 会话 登录 支付 订单 库存 搜索 排序 召回 片段 同步 推送 拉取
远程 上游 默认 回退 灰度 兼容 迁移 升级 降级 监控 报警 性能 优化 瓶颈 稳定
可靠 安全 隐私 用户 偏好 决策 原因 根因 约定 规则 事实 坑 注意 避免 必须
不要 总是 优先 尽量 记住 确认 检查
"""
)

ZH_GLUE = ["的", "了", "在", "用", "而不是", "因为", "所以", "但是", "如果", "就", "要", "会"]
# Function words take the top Zipf ranks, as in real prose; the tech words follow.
EN_STOP = _split(
    """
the a to of and in is for on with it that this be not use we do when if by as or at from
"""
)
_STOP = frozenset(EN_STOP)
_SYLLABLES = _split(
    """
ka ri mo te shu val dor pen lix qua bre tos min zel far gro hup nik ost wen
"""
)
SIZE_EN = 12_000  # words in the English vocabulary
SIZE_ZH = 6_000  # two-character words in the Chinese vocabulary
ZIPF = 1.0
AGE_DAYS = 3 * 365
INFLECTED = 1 / 7  # share of English content words written as another form
SUFFIXES = ("s", "ed", "ing")


def forms(word: str) -> tuple[str, ...]:
    """A word and its inflections, spelled by the plain rules (the benchmark's judge)."""
    if word.endswith("e"):
        return (word, word + "s", word + "d", word[:-1] + "ing")
    if word.endswith(("s", "x", "sh", "ch")):
        return (word, word + "es", word + "ed", word + "ing")
    if word.endswith("y") and len(word) > 2 and word[-2] not in "aeiou":
        return (word, word[:-1] + "ies", word[:-1] + "ied", word + "ing")
    return (word, word + "s", word + "ed", word + "ing")


def hit_counts(paths: list[Path], root: Path, seed: int = 0) -> dict[str, int]:
    """Deterministic recall counts for a fifth of the memories (ids from their paths)."""
    rng = random.Random(seed + 7)
    counts = {}
    for path in paths:
        if rng.random() < 0.2:
            counts[path.relative_to(root).as_posix()[:-3]] = int(rng.paretovariate(1.2))
    return counts


def vocabulary() -> tuple[list[str], list[str]]:
    """Deterministic vocabularies: real words first, then made-up ones for the long tail."""
    en = EN_STOP + [w for w in EN if w not in EN_STOP]
    syllables = _SYLLABLES
    for a in syllables:
        for b in syllables:
            for c in syllables:
                if len(en) >= SIZE_EN:
                    break
                en.append(a + b + c)
    chars = sorted({c for word in ZH for c in word})
    zh = list(ZH)
    seen = set(zh)
    for i, a in enumerate(chars):
        for b in chars[i * 7 % len(chars) :] + chars[: i * 7 % len(chars)]:
            if len(zh) >= SIZE_ZH:
                break
            if a + b not in seen:
                seen.add(a + b)
                zh.append(a + b)
    return en, zh


def generate(root: Path, n: int, seed: int = 0) -> list[Path]:
    """Write ``n`` memory files under ``root``; return their paths in creation order."""
    rng = random.Random(seed)
    words = _Words(rng, *vocabulary())
    folders = list(KINDS)
    paths: list[Path] = []
    for number in range(n):
        folder = folders[number % len(folders)]
        sub = f"{number // (PER_FOLDER * len(folders)):03d}"
        name = f"{words.topic()}-{words.topic()}-{number:06d}"
        relative = f"{folder}/{sub}/{name}.md"
        text, updated = _memory(rng, words, folder, relative, number)
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        os.utime(path, ns=(updated * 1_000_000, updated * 1_000_000))
        paths.append(path)
    return paths


class _Words:
    def __init__(self, rng: random.Random, en: list[str], zh: list[str]) -> None:
        self.rng, self.en_words, self.zh_words = rng, en, zh
        self.en_cum = list(itertools.accumulate(1 / (r + 1) ** ZIPF for r in range(len(en))))
        self.zh_cum = list(itertools.accumulate(1 / (r + 1) ** ZIPF for r in range(len(zh))))

    def en(self, k: int) -> list[str]:
        words = self.rng.choices(self.en_words, cum_weights=self.en_cum, k=k)
        return [self._inflect(w) for w in words]

    def _inflect(self, word: str) -> str:
        if word in _STOP or self.rng.random() >= INFLECTED:
            return word
        return self.rng.choice(forms(word)[1:])

    def zh(self, k: int) -> list[str]:
        return self.rng.choices(self.zh_words, cum_weights=self.zh_cum, k=k)

    def topic(self) -> str:
        """A content word (no function word) for names and load_when."""
        return self.rng.choice(EN)

    def en_sentence(self) -> str:
        words = self.en(self.rng.randint(5, 14))
        return " ".join(words).capitalize() + "."

    def zh_sentence(self) -> str:
        parts: list[str] = []
        for word in self.zh(self.rng.randint(3, 7)):
            parts += [word, self.rng.choice(ZH_GLUE)]
        if self.rng.random() < 0.5:  # Chinese prose names tools in Latin letters
            parts.insert(self.rng.randrange(len(parts)), f" {self.topic()} ")
        return "".join(parts[:-1]) + "。"


def _memory(
    rng: random.Random, words: _Words, folder: str, relative: str, number: int
) -> tuple[str, int]:
    chinese = rng.random() < 0.5
    created = BASE_MS - rng.randint(0, AGE_DAYS) * DAY_MS - rng.randint(0, DAY_MS)
    updated = min(BASE_MS, created + rng.randint(0, 60) * DAY_MS)
    summary = words.zh_sentence() if chinese else words.en_sentence()
    load_when = [words.topic() for _ in range(rng.randint(1, 2))]
    load_when += [rng.choice(ZH)] if chinese else []
    quoted = number % 2 == 1  # half the files as people and tools write them (by number:
    # the random stream, and so the corpus's words, stay the same)
    triggers = [f'"{w}"' for w in dict.fromkeys(load_when)] if quoted else load_when
    lines = [
        "---",
        f"id: {relative[:-3]}",
        f"kind: {KINDS[folder]}",
        f'summary: "{summary}"' if quoted else f"summary: {summary}",
        f"created: {created}",
        f"updated: {updated}",
        f"load_when: [{', '.join(dict.fromkeys(triggers))}]",
    ]
    if rng.random() < 0.05:
        lines.append("pinned: true")
    elif quoted:
        lines.append("pinned: false  # hand-written files say so")
    if number > 0 and rng.random() < 0.01:
        lines.append(f"superseded_by: {folder}/{number:06d}-newer")
    lines.append("---")
    body = []
    for _ in range(rng.randint(2, 6)):
        make = words.zh_sentence if chinese and rng.random() < 0.7 else words.en_sentence
        body.append(" ".join(make() for _ in range(rng.randint(1, 3))))
    return "\n".join(lines) + "\n" + "\n\n".join(body) + "\n", updated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("n", type=int)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    paths = generate(args.folder, args.n, args.seed)
    print(f"wrote {len(paths)} memories under {args.folder}")


if __name__ == "__main__":
    main()
