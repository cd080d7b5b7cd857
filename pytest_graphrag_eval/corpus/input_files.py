"""Reading user files safely: bounded size, known encodings, no binaries.

Every corpus, response and configuration file goes through `read_input_text`, so a huge, binary
or oddly encoded file fails at once with a message naming it, not with a traceback later.
"""

from __future__ import annotations

import codecs
import math
import os
from collections.abc import Callable
from pathlib import Path

from pytest_graphrag_eval.errors import ConfigurationError, InputError, SourceLocation

ErrorFactory = Callable[[str, SourceLocation], Exception]

MAX_INPUT_MB_ENV = "GRAPHRAG_EVAL_MAX_INPUT_MB"
DEFAULT_MAX_INPUT_MB = 256

# Longest BOMs first: the UTF-32-LE mark starts with the UTF-16-LE one.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32", "UTF-32"),
    (codecs.BOM_UTF32_BE, "utf-32", "UTF-32"),
    (codecs.BOM_UTF8, "utf-8-sig", "UTF-8"),
    (codecs.BOM_UTF16_LE, "utf-16", "UTF-16"),
    (codecs.BOM_UTF16_BE, "utf-16", "UTF-16"),
)
BYTE_ORDER_MARKS = tuple(bom for bom, _, _ in _BOMS)


def configuration_error(message: str, location: SourceLocation) -> ConfigurationError:
    """An ErrorFactory for configuration files (answers config, custom metrics)."""
    return ConfigurationError(f"{location.describe()}: {message}")


def max_input_bytes() -> int:
    """The size cap for one input file: `GRAPHRAG_EVAL_MAX_INPUT_MB` megabytes (default 256); a value
    that is no size is refused, never replaced by the default or a cap of a few bytes without a word."""
    raw = os.environ.get(MAX_INPUT_MB_ENV, "").strip()
    try:
        megabytes = float(raw) if raw else DEFAULT_MAX_INPUT_MB
    except ValueError:
        megabytes = math.nan
    if not (math.isfinite(megabytes) and megabytes > 0):
        raise ConfigurationError(f"{MAX_INPUT_MB_ENV} must be a number of megabytes > 0, got {raw!r}")
    return max(round(megabytes * 1024 * 1024), 1)


def read_input_text(
    path: str | Path,
    *,
    shown: str | None = None,
    error_type: ErrorFactory = InputError,
    what: str = "file",
) -> str:
    """The text of a user file, or `error_type` naming the file (as `shown`) and what is wrong."""
    data = read_input_bytes(path, shown=shown, error_type=error_type, what=what)
    return decode_input(data, SourceLocation(file=shown or str(path)), error_type, what)


def read_input_bytes(
    path: str | Path,
    *,
    shown: str | None = None,
    error_type: ErrorFactory = InputError,
    what: str = "file",
) -> bytes:
    """The bytes of a user file within the size cap, not yet decoded (`decode_input` does that)."""
    path = Path(path)
    location = SourceLocation(file=shown or str(path))
    limit = max_input_bytes()
    try:
        if path.is_dir():
            raise error_type(f"is a folder, expected a {what}", location)
        with path.open("rb") as stream:
            data = stream.read(limit + 1)
    except OSError as error:
        raise error_type(f"cannot read {what}: {error.strerror or error}", location) from None
    if len(data) > limit:
        raise error_type(
            f"{what} is larger than {limit / (1024 * 1024):.4g} MB; raise {MAX_INPUT_MB_ENV} if it is "
            "really meant to be this big",
            location,
        )
    return data


def decode_input(
    data: bytes, location: SourceLocation, error_type: ErrorFactory = InputError, what: str = "file"
) -> str:
    """Decode by byte-order mark, else as strict UTF-8; NUL bytes without a BOM mean binary."""
    for bom, codec, name in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(codec).lstrip("\ufeff")
            except UnicodeDecodeError as error:
                raise error_type(
                    f"{what} starts with a {name} byte-order mark but is not valid {name} "
                    f"(at byte {error.start}); save it as UTF-8",
                    location,
                ) from None
    if b"\x00" in data:
        raise error_type(
            f"{what} looks binary (it contains NUL bytes); expected UTF-8 text "
            "(UTF-16/32 files need a byte-order mark)",
            location,
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise error_type(
            f"{what} is not UTF-8 text (byte 0x{data[error.start]:02x} on line {line}); save it as UTF-8",
            location,
        ) from None
