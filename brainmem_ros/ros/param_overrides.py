"""``-p`` overrides that rclpy does not see next to a params file: read and type-checked here.

rcl merges a params file and the ``-p`` rules of the command line into one value per
parameter, with one field per type: a ``-p`` value of another type than the file's is set
beside it, and rclpy reads the first field set (bool, integer, double, string, arrays).
So ``hops:=abc`` next to ``hops: 2`` in the file reaches the node as 2 and nothing is
refused, while without the file rclpy refuses it. The node reads the rules itself and
refuses a wrongly typed one the way rclpy does without a file.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Sequence
from typing import Any

import yaml
from rclpy.exceptions import InvalidParameterTypeException
from rclpy.node import Node
from rclpy.parameter import Parameter

# How rcl types a value (rcl_yaml_param_parser's get_value): a quoted scalar is a string;
# else these words are booleans, then C strtol (base 0) and strtod decide integers and doubles.
_BOOLS = {**dict.fromkeys(['Y', 'y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON'], True),
          **dict.fromkeys(['N', 'n', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF'],
                          False)}
_YAML_FLOATS = {f'{sign}.{word}': float(f'{sign}inf')
                for sign in ('', '+', '-') for word in ('inf', 'Inf', 'INF')}
_YAML_FLOATS |= dict.fromkeys(['.nan', '.NaN', '.NAN'], math.nan)
_C_LONG = re.compile(r'[+-]?(?:0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)')
_C_DECIMAL = re.compile(r'[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?')
_C_HEX = re.compile(r'[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?')
_C_SPECIAL = re.compile(r'[+-]?(?:inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?)', re.IGNORECASE)
_NONZERO_MANTISSA = re.compile(r'[+-]?(?:0[xX])?[0.]*[1-9a-fA-F]')


def _c_long(text: str) -> int | None:
    if not _C_LONG.fullmatch(text):
        return None
    digits = text.lstrip('+-')
    base = 16 if digits[:2] in ('0x', '0X') else 8 if digits[:1] == '0' and len(digits) > 1 else 10
    value = int(digits, base) * (-1 if text[0] == '-' else 1)
    return value if -2**63 <= value < 2**63 else None  # else strtol's ERANGE


def _c_double(text: str) -> float | None:
    if _C_SPECIAL.fullmatch(text):
        return float(text.split('(', maxsplit=1)[0])
    if _C_HEX.fullmatch(text):
        value = float.fromhex(text)
    elif _C_DECIMAL.fullmatch(text):
        value = float(text)
    else:
        return None
    if math.isinf(value) or (abs(value) < sys.float_info.min and _NONZERO_MANTISSA.match(text)):
        return None  # strtod's ERANGE (overflow, underflow): rcl keeps the text as a string
    return value


def _rcl_scalar(node: yaml.ScalarNode) -> bool | int | float | str:
    text: str = node.value
    if node.style in ("'", '"'):
        return text
    if text in _BOOLS:
        return _BOOLS[text]
    number = _c_long(text)
    if number is not None:
        return number
    if text in _YAML_FLOATS:
        return _YAML_FLOATS[text]
    real = _c_double(text)
    return text if real is None else real


def rcl_value(text: str) -> Any:
    """The value rcl reads from ``-p name:=text``; None if rcl would refuse it.

    >>> rcl_value('2'), rcl_value('abc'), rcl_value("'2'"), rcl_value('[1.5, 2.0]')
    (2, 'abc', '2', [1.5, 2.0])
    """
    try:
        node = yaml.compose(text)
    except yaml.YAMLError:
        return None
    if isinstance(node, yaml.ScalarNode):
        return _rcl_scalar(node)
    if isinstance(node, yaml.SequenceNode) and node.value and all(
            isinstance(n, yaml.ScalarNode) for n in node.value):
        items = [_rcl_scalar(n) for n in node.value]
        return items if len({type(v) for v in items}) == 1 else None
    return None


def command_line_overrides(args: Sequence[str]) -> dict[str, str]:
    """``-p name:=value`` rules in the ROS arguments of ``args``, the last one per name."""
    rules: dict[str, str] = {}
    ros = False
    tokens = iter(args)
    for token in tokens:
        if token == '--ros-args':
            ros = True
        elif token == '--':
            ros = False
        elif ros and token in ('-p', '--param'):
            name, sep, text = next(tokens, '').partition(':=')
            if sep:
                rules[name] = text
    return rules


def check_overrides(node: Node, args: Sequence[str]) -> list[str]:
    """Refuse a ``-p`` override whose type is not its declared parameter's; return a warning
    for each well-typed one that did not take effect.

    rclpy sees a ``-p`` value only if no params file gives the same parameter a value of
    another type: rcl keeps both in one variant, one field per type, and rclpy reads the
    first field set in the order bool, integer, double, string, arrays. So ``hops:=abc``
    next to ``hops: 2`` in the file reaches the node as 2, and rclpy refuses nothing.

    A ``-p`` rule belongs to the ``/**`` section, and rcl resolves a node's sections in the
    order they first appeared: a params-file section that names the node beats every ``-p``
    once any ``-p`` came before the file. Nothing says so; the warning does.
    """
    ignored: list[str] = []
    for name, text in command_line_overrides(args).items():
        if not node.has_parameter(name):
            continue
        descriptor = node.describe_parameter(name)
        value = rcl_value(text)
        if descriptor.dynamic_typing or value is None:
            continue
        if Parameter.Type.from_parameter_value(value).value != descriptor.type:
            # The exception rclpy raises for it without a params file, named the same way.
            expected: Any = Parameter.Type(descriptor.type).name
            raise InvalidParameterTypeException(Parameter(name, value=value), expected)
        held = node.get_parameter(name).value
        if not _same(held, value):
            ignored.append(f'-p {name}:={text} did not take effect ({name} is {held!r}): a params-file '
                           'section that names this node overrides it (rcl resolves sections in the order '
                           'they first appear, and -p rules are /**); set it in that section, or give the '
                           'file its values under /**: and -p after --params-file')
    return ignored


def _same(held: Any, value: Any) -> bool:
    if isinstance(value, float) and isinstance(held, float) and math.isnan(value):
        return math.isnan(held)
    return bool(held == value) if not isinstance(held, (list, tuple)) else list(held) == list(value)
