"""What we append is validated by msgspec schemas (``store/entries.py``); they took over from
pydantic models to keep pydantic off the start of print, JSON and RPC mode. The pydantic models
are kept here as the reference: on every entry, valid or not, the new validation accepts what
they accepted, rejects what they rejected, and writes the same object, key for key and in order."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Discriminator, Tag, TypeAdapter

from agent_tui.store.entries import SCHEMAS, SessionHeader, validate_entry

# -- the reference: the pydantic models as they were -----------------------------------------


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def to_json(self) -> dict[str, Any]:
        full = self.model_dump(mode="json", by_alias=True)
        explicit = self.model_fields_set | set(self.model_extra or ())
        data = {k: v for k, v in full.items() if v is not None or k in explicit}
        if "type" in data:
            data = {"type": data.pop("type"), **data}
        return data


class _Entry(_Model):
    id: str
    parentId: str | None
    timestamp: str


class MessageEntry(_Entry):
    type: Literal["message"] = "message"
    message: dict[str, Any]


class CompactionEntry(_Entry):
    type: Literal["compaction"] = "compaction"
    summary: str
    firstKeptEntryId: str
    tokensBefore: int
    details: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    systemMessage: dict[str, Any] | None = None


class ContentReplacement(_Model):
    content: str | list[dict[str, Any]]


class ContextEditEntry(_Entry):
    type: Literal["context_edit"] = "context_edit"
    targetId: str
    replacement: ContentReplacement | None
    restore: bool | None = None


class BranchSummaryEntry(_Entry):
    type: Literal["branch_summary"] = "branch_summary"
    fromId: str
    summary: str
    details: dict[str, Any] | None = None


class ModelChangeEntry(_Entry):
    type: Literal["model_change"] = "model_change"
    provider: str
    modelId: str


class ThinkingLevelChangeEntry(_Entry):
    type: Literal["thinking_level_change"] = "thinking_level_change"
    thinkingLevel: str


class LabelEntry(_Entry):
    type: Literal["label"] = "label"
    targetId: str
    label: str | None


class SessionInfoEntry(_Entry):
    type: Literal["session_info"] = "session_info"
    name: str


class CustomEntry(_Entry):
    type: Literal["custom"] = "custom"
    customType: str
    data: Any = None


class CustomMessageEntry(_Entry):
    type: Literal["custom_message"] = "custom_message"
    customType: str
    content: str | list[dict[str, Any]]
    display: bool = True
    details: Any = None


class UsageEntry(_Entry):
    type: Literal["usage"] = "usage"
    kind: str
    provider: str | None = None
    model: str | None = None
    usage: dict[str, Any] | None = None


class PinEntry(_Entry):
    type: Literal["pin"] = "pin"
    targetId: str
    pinned: bool = True


class UnknownEntry(_Entry):
    type: str


_MODELS: dict[str, type[_Entry]] = {
    m.model_fields["type"].default: m
    for m in (
        MessageEntry,
        CompactionEntry,
        ContextEditEntry,
        BranchSummaryEntry,
        ModelChangeEntry,
        ThinkingLevelChangeEntry,
        LabelEntry,
        SessionInfoEntry,
        CustomEntry,
        CustomMessageEntry,
        UsageEntry,
        PinEntry,
    )
}


def _discriminate(value: Any) -> str:
    entry_type = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return entry_type if entry_type in _MODELS else "unknown"


AnyEntry = Annotated[
    Annotated[MessageEntry, Tag("message")]
    | Annotated[CompactionEntry, Tag("compaction")]
    | Annotated[ContextEditEntry, Tag("context_edit")]
    | Annotated[BranchSummaryEntry, Tag("branch_summary")]
    | Annotated[ModelChangeEntry, Tag("model_change")]
    | Annotated[ThinkingLevelChangeEntry, Tag("thinking_level_change")]
    | Annotated[LabelEntry, Tag("label")]
    | Annotated[SessionInfoEntry, Tag("session_info")]
    | Annotated[CustomEntry, Tag("custom")]
    | Annotated[CustomMessageEntry, Tag("custom_message")]
    | Annotated[UsageEntry, Tag("usage")]
    | Annotated[PinEntry, Tag("pin")]
    | Annotated[UnknownEntry, Tag("unknown")],
    Discriminator(_discriminate),
]
_adapter: TypeAdapter[Any] = TypeAdapter(AnyEntry)


def reference(data: dict[str, Any]) -> dict[str, Any]:
    result: _Entry = _adapter.validate_python(data)
    return result.to_json()


# -- entries, valid and not -------------------------------------------------------------------

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["", "x", "5", "5.0", "true", "false", "0", "1", "yes", "null", "none"]),
    st.text(max_size=8),
)
_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
#: Values a field of each kind might be given: right, coercible, wrong.
_values = st.one_of(
    _json,
    st.lists(st.dictionaries(st.sampled_from(["type", "text"]), _scalars, max_size=2), max_size=2),
    st.fixed_dictionaries({"content": _json}, optional={"extra": _json}),
    st.integers(0, 10**6).map(float),
)
_FIELDS = sorted({name for schema in SCHEMAS.values() for name in schema.__struct_fields__} - {"type"})


#: A right value for each field of the schemas.
_RIGHT: dict[str, Any] = {
    "message": {"role": "user", "content": "hi", "timestamp": 1},
    "summary": "s",
    "firstKeptEntryId": "e0",
    "tokensBefore": 12,
    "details": {"d": 1},
    "usage": {"input": 1},
    "systemMessage": {"role": "system", "content": "be brief"},
    "targetId": "e0",
    "replacement": {"content": [{"type": "text", "text": "x"}]},
    "restore": True,
    "fromId": "e0",
    "provider": "p",
    "modelId": "m",
    "thinkingLevel": "high",
    "label": "l",
    "name": "n",
    "customType": "c",
    "data": [1, "two"],
    "content": "x",
    "display": False,
    "kind": "k",
    "model": "m",
    "pinned": False,
}


@st.composite
def entries(draw: st.DrawFn) -> dict[str, Any]:
    """A right entry of some type (required fields, some optional ones), then up to three changes:
    a field given another value (right, coercible or wrong), a field left out, an unknown field."""
    entry_type = draw(st.sampled_from([*SCHEMAS, "weird_type", 5, None]))
    data: dict[str, Any] = {"type": entry_type, "id": "e1", "parentId": "e0", "timestamp": "t"}
    if entry_type in SCHEMAS:
        for field in msgspec.structs.fields(SCHEMAS[entry_type]):
            if field.name not in data and (field.required or draw(st.booleans())):
                data[field.name] = _RIGHT[field.name]
    for _ in range(draw(st.integers(0, 3))):
        change = draw(st.sampled_from(["value", "drop", "extra"]))
        if change == "value":
            data[draw(st.sampled_from([*data, *_FIELDS]))] = draw(_values)
        elif change == "drop" and data:
            del data[draw(st.sampled_from(sorted(data)))]
        else:
            data[draw(st.sampled_from(["extraField", "x-y", "_z"]))] = draw(_json)
    if isinstance(data.get("type"), list | dict):
        data["type"] = "weird_type"  # pydantic's discriminator raised TypeError (see below)
    return data


def _outcome(validate: Any, data: dict[str, Any]) -> tuple[str, Any]:
    try:
        out = validate(data)
    except (pydantic.ValidationError, msgspec.ValidationError):
        return ("rejected", None)
    return ("written", list(out.items()))


@settings(max_examples=200, deadline=None)
@given(entries())
def test_validation_agrees_with_the_pydantic_models(data: dict[str, Any]) -> None:
    assert _outcome(validate_entry, data) == _outcome(reference, data)


@pytest.mark.slow  # 1,500 entries: 10 s; the edit loop's 200 above take 1.5 s
@settings(max_examples=1500, deadline=None)
@given(entries())
def test_validation_agrees_with_the_pydantic_models_at_length(data: dict[str, Any]) -> None:
    assert _outcome(validate_entry, data) == _outcome(reference, data)


def _valid(entry_type: str, **fields: Any) -> dict[str, Any]:
    return {"type": entry_type, "id": "e1", "parentId": "e0", "timestamp": "t", **fields}


@pytest.mark.parametrize(
    ("data", "written"),
    [
        (_valid("custom_message", customType="c", content="x"), {"display": True}),
        (_valid("pin", targetId="e0"), {"pinned": True}),
        (_valid("context_edit", targetId="e0", replacement=None), {"replacement": None}),
        (
            _valid("context_edit", targetId="e0", replacement={"content": "y", "kept": 1}),
            {"replacement": {"content": "y", "kept": 1}},
        ),
        (_valid("compaction", summary="s", firstKeptEntryId="e0", tokensBefore="12"), {"tokensBefore": 12}),
        (_valid("future_kind", anything=[1, {"a": None}]), {"anything": [1, {"a": None}]}),
    ],
)
def test_defaults_nested_unknown_fields_and_coercion_are_written(
    data: dict[str, Any], written: dict[str, Any]
) -> None:
    out = validate_entry(data)
    assert next(iter(out)) == "type" and out.items() >= written.items()
    assert out == reference(data)


@pytest.mark.parametrize(
    "data",
    [
        _valid("message", message="not an object"),
        _valid("compaction", summary="s", firstKeptEntryId="e0"),  # tokensBefore missing
        _valid("label", targetId="e0"),  # label: required, even if null
        {"type": "message", "id": "e1", "timestamp": "t", "message": {}},  # parentId missing
        _valid("future_kind", id=7),
        _valid("context_edit", targetId="e0", replacement={"content": 5}),
    ],
)
def test_what_is_wrong_is_refused(data: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        validate_entry(data)
    with pytest.raises(ValueError):
        reference(data)


def test_a_type_that_is_not_a_string_is_refused() -> None:
    """(pydantic's discriminator raised TypeError on an unhashable type; now a ValidationError)"""
    entry_type: object
    for entry_type in ([], {}, 5, None):
        with pytest.raises(msgspec.ValidationError):
            validate_entry(_valid("x") | {"type": entry_type})


def test_the_written_object_is_a_copy() -> None:
    message: dict[str, Any] = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    out = validate_entry(_valid("message", message=message))
    message["content"][0]["text"] = "changed later"
    assert out["message"]["content"][0]["text"] == "hi"


def test_the_header_is_written_as_before() -> None:
    header = SessionHeader(id="s1", timestamp="t", cwd="/w")
    assert list(header.to_json().items()) == [
        ("type", "session"),
        ("version", 3),
        ("id", "s1"),
        ("timestamp", "t"),
        ("cwd", "/w"),
    ]
    header.parentSession = "/w/parent.jsonl"
    assert header.to_json()["parentSession"] == "/w/parent.jsonl"
