"""The rig input's key file: refused at parameter validation unless private, regular and long
enough; the key itself never appears in a message."""
import os

import pytest

from vehicle_sim.core.config import ConfigError, build_flat
from vehicle_sim.core.motion.input_key import MIN_KEY_BYTES, read_key_file
from vehicle_sim.core.motion.node_params import BridgeNodeParams

SECRET = b"0123456789abcdef-secret-key-bytes"


def key_file(tmp_path, data: bytes = SECRET, mode: int = 0o600) -> str:
    path = tmp_path / "rig.key"
    path.write_bytes(data)
    path.chmod(mode)
    return str(path)


def refusal(path: str) -> str:
    """The message with which the bridge parameters refuse ``input_key_file``."""
    with pytest.raises(ConfigError) as err:
        build_flat(BridgeNodeParams, {"input_key_file": path}, source="node /bridge")
    text = str(err.value)
    assert path in text and "input_key_file" in text and "\n" not in text
    assert SECRET.decode() not in text and SECRET[:16].decode() not in text
    return text


def test_a_private_key_file_is_read_whole(tmp_path):
    path = key_file(tmp_path)
    assert BridgeNodeParams(input_key_file=path).input_key() == SECRET == read_key_file(path)
    assert BridgeNodeParams().input_key() is None  # default: no authentication


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o620, 0o602, 0o660, 0o644, 0o700 | 0o007])
def test_a_key_file_others_can_access_is_refused(tmp_path, mode):
    assert "too open" in refusal(key_file(tmp_path, mode=mode))


@pytest.mark.parametrize("data", [b"", b"x" * (MIN_KEY_BYTES - 1)])
def test_an_empty_or_short_key_is_refused(tmp_path, data):
    assert f"at least {MIN_KEY_BYTES}" in refusal(key_file(tmp_path, data))


def test_a_key_of_exactly_the_minimum_length_is_accepted(tmp_path):
    assert len(read_key_file(key_file(tmp_path, b"x" * MIN_KEY_BYTES))) == MIN_KEY_BYTES


def test_missing_relative_and_non_regular_paths_are_refused(tmp_path):
    assert "cannot open" in refusal(str(tmp_path / "absent.key"))
    assert "absolute" in refusal("rig.key")
    assert "not a regular file" in refusal(str(tmp_path))


def test_a_symlink_to_a_private_key_is_followed_and_checked(tmp_path):
    link = tmp_path / "link.key"
    link.symlink_to(key_file(tmp_path))
    assert read_key_file(str(link)) == SECRET  # the target's mode counts (ssh does the same)
    os.chmod(link, 0o644)  # chmod follows the link: the key itself is now readable
    assert "too open" in refusal(str(link))
