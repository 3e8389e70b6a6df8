"""Every stable ACP wire model, under its schema name.

    from acp_sdk.schema import PromptRequest, TextContent

    request = PromptRequest(session_id="s1", prompt=[TextContent(text="hi")])

Classes are frozen, slotted, keyword-only attrs classes with snake_case fields (the wire
name is in each field's `metadata["wire"]`). Unions such as `ContentBlock` and
`SessionUpdate` are type aliases; `UnknownSessionUpdate` carries an update kind this SDK
does not know. The models are generated from the pinned schema; see `acp_sdk._codegen`.
"""

from __future__ import annotations

from acp_sdk.protocol._generated.models import *  # noqa: F403 - re-exports the generated __all__
from acp_sdk.protocol._generated.models import __all__ as __all__
from acp_sdk.protocol._model_support import UNSET as UNSET
from acp_sdk.protocol._model_support import UnsetType as UnsetType
from acp_sdk.protocol._model_support import WireModel as WireModel
