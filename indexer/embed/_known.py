"""Defaults for models the harness knows: prompts, pooling, dimensions, and whether they run code of their own.

This table is not a gate: ``--model`` takes any sentence-transformers model id or local folder. A known model
only gets defaults where its own files are silent (a folder's ``config_sentence_transformers.json`` prompts
win over these, ``--query-prompt``/``--document-prompt`` win over both; ``pooling`` applies only to a folder
without ``modules.json``, which sentence-transformers would otherwise mean-pool).

``trust_remote_code`` marks models whose weights come with Python code (``auto_map`` in their
``config.json``) that loading executes; they are refused unless ``--trust-remote-code`` is given. The folder's
own declarations are checked too (:func:`indexer.embed._folder.custom_code`), so a model missing from this
table is caught the same way.

R2MED's strongest retrievers (the paper's names in brackets; its code runs them with per-dataset instructions,
of which the prompts below are the generic form):

==================================  ===========  ====  ==========  ============================================
hub id                              [paper]      dims  remote code  notes
==================================  ===========  ====  ==========  ============================================
nvidia/NV-Embed-v2                  [nv]         4096  yes         custom NVEmbedModel, latent-attention pooling
GritLM/GritLM-7B                    [grit]       4096  yes         custom Mistral with bidirectional attention;
                                                                   the paper ran it through the gritlm package
Alibaba-NLP/gte-Qwen2-7B-instruct                3584  yes         custom Qwen2 modeling code
Alibaba-NLP/gte-Qwen2-1.5B-instruct              1536  yes         custom Qwen2 modeling code
Salesforce/SFR-Embedding-Mistral    [sfr]        4096  no          last-token pooling
intfloat/e5-mistral-7b-instruct     [e5]         4096  no          last-token pooling
BMRetriever/BMRetriever-7B          [bmr-7b]     4096  no          plain transformers folder: last-token pooling
BMRetriever/BMRetriever-2B          [bmr-2b]     2048  no          plain transformers folder: last-token pooling
BMRetriever/BMRetriever-410M        [bmr-410m]   1024  no          plain transformers folder: last-token pooling
BAAI/bge-large-en-v1.5              [bge]        1024  no          CLS pooling (from its modules.json)
==================================  ===========  ====  ==========  ============================================
"""

from __future__ import annotations

from dataclasses import dataclass

E5_QUERY_PROMPT = "query: "
E5_DOCUMENT_PROMPT = "passage: "
BGE_QUERY_PROMPT = "Represent this sentence for searching relevant passages: "
INSTRUCT_TASK = "Given a web search query, retrieve relevant passages that answer the query"
INSTRUCT_QUERY_PROMPT = f"Instruct: {INSTRUCT_TASK}\nQuery: "
BMR_QUERY_PROMPT = f"{INSTRUCT_TASK}\nQuery: "
BMR_DOCUMENT_PROMPT = "Represent this passage\npassage: "
GRIT_QUERY_PROMPT = f"<|user|>\n{INSTRUCT_TASK}\n<|embed|>\n"
GRIT_DOCUMENT_PROMPT = "<|embed|>\n"


@dataclass(frozen=True, slots=True)
class KnownModel:
    """Defaults for one hub model (used where the model's own files say nothing)."""

    hub_id: str
    aliases: tuple[str, ...] = ()
    query_prompt: str = ""
    document_prompt: str = ""
    pooling: str | None = None  # for a folder without modules.json (sentence-transformers' default: mean)
    trust_remote_code: bool = False  # the model's weights come with code that loading runs
    note: str = ""


def _instruct(
    hub_id: str, aliases: tuple[str, ...], *, trust_remote_code: bool = False, note: str = ""
) -> KnownModel:
    """An instruction-tuned model: the generic instruction before queries, nothing before documents."""
    return KnownModel(hub_id, aliases, INSTRUCT_QUERY_PROMPT, trust_remote_code=trust_remote_code, note=note)


def _bmr(size: str) -> KnownModel:
    return KnownModel(
        f"BMRetriever/BMRetriever-{size}",
        (f"bmr-{size.lower()}", f"BMRetriever-{size}"),
        BMR_QUERY_PROMPT,
        BMR_DOCUMENT_PROMPT,
        pooling="lasttoken",
        note="a plain transformers folder (no modules.json): last-token pooling",
    )


KNOWN_MODELS: tuple[KnownModel, ...] = (
    KnownModel("sentence-transformers/all-MiniLM-L6-v2", ("minilm", "all-MiniLM-L6-v2")),
    KnownModel("intfloat/e5-small-v2", ("e5-small-v2",), E5_QUERY_PROMPT, E5_DOCUMENT_PROMPT),
    KnownModel("intfloat/e5-base-v2", ("e5", "e5-base-v2"), E5_QUERY_PROMPT, E5_DOCUMENT_PROMPT),
    KnownModel("BAAI/bge-small-en-v1.5", ("bge-small-en-v1.5",), BGE_QUERY_PROMPT),
    KnownModel("BAAI/bge-base-en-v1.5", ("bge", "bge-base-en-v1.5"), BGE_QUERY_PROMPT),
    KnownModel("BAAI/bge-large-en-v1.5", ("bge-large-en-v1.5",), BGE_QUERY_PROMPT, pooling="cls"),
    _instruct("intfloat/e5-mistral-7b-instruct", ("e5-mistral", "e5-mistral-7b-instruct")),
    _instruct("Salesforce/SFR-Embedding-Mistral", ("sfr", "SFR-Embedding-Mistral")),
    _instruct(
        "nvidia/NV-Embed-v2",
        ("nv-embed", "NV-Embed-v2"),
        trust_remote_code=True,
        note="custom NVEmbedModel (latent-attention pooling) in modeling_nvembed.py",
    ),
    KnownModel(
        "GritLM/GritLM-7B",
        ("gritlm", "GritLM-7B"),
        GRIT_QUERY_PROMPT,
        GRIT_DOCUMENT_PROMPT,
        trust_remote_code=True,
        note="custom Mistral modeling code (bidirectional attention); the R2MED paper embedded with the gritlm "
        "package, which leaves the instruction out of the mean pooling",
    ),
    _instruct(
        "Alibaba-NLP/gte-Qwen2-1.5B-instruct",
        ("gte-qwen2", "gte-Qwen2-1.5B-instruct"),
        trust_remote_code=True,
        note="custom Qwen2 modeling code",
    ),
    _instruct(
        "Alibaba-NLP/gte-Qwen2-7B-instruct",
        ("gte-qwen2-7b", "gte-Qwen2-7B-instruct"),
        trust_remote_code=True,
        note="custom Qwen2 modeling code",
    ),
    _bmr("7B"),
    _bmr("2B"),
    _bmr("410M"),
)


def find_known(name: str) -> KnownModel | None:
    """The known model whose hub id or alias is ``name`` (case-insensitive), if any."""
    wanted = name.strip().lower()
    for model in KNOWN_MODELS:
        if wanted == model.hub_id.lower() or wanted in (a.lower() for a in model.aliases):
            return model
    return None


def remote_code_models() -> list[KnownModel]:
    """The known models that need ``--trust-remote-code``."""
    return [m for m in KNOWN_MODELS if m.trust_remote_code]
