"""Media whose kind a dialect states but whose type it does not: ``image/*``.

Chat's ``image_url``, Responses' ``input_image``, Anthropic's ``image`` block and AG-UI's
``image`` part may carry a URL without a media type (``https://httpbin.org/image/jpeg``:
no extension either). The dialect still says it is an image, and the other dialects need
that to choose a form (Chat ``image_url``, Responses ``input_image``, an Anthropic ``image``
block): a decoder records it as the wildcard ``<kind>/*`` in ``MediaPart.media_type``.
A wildcard is not an IANA media type, so no encoder writes one: where the wire has a
media-type field, it is left out, as the part came.
"""

from __future__ import annotations

from typing import Final

KINDS: Final = ("image", "audio", "video")
"""The kinds a wildcard may name."""


def wildcard(kind: str) -> str:
    """``<kind>/*``: a part of that kind whose media type is unknown."""
    return f"{kind}/*"


def concrete(media_type: str | None) -> str | None:
    """The media type to write on a wire: ``None`` for a wildcard (or no type)."""
    if media_type is None or media_type.endswith("/*"):
        return None
    return media_type
