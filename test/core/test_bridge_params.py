"""The bridge's parameters that are each valid but cannot work together, or name addresses
that can never take part, refuse the start in one line (core.motion.node_params)."""
import pytest

from vehicle_sim.core.motion.node_params import BridgeNodeParams


@pytest.mark.parametrize("params, words", [
    ({"allowed_peers": ("0.0.0.0",)}, "allowed_peers entry 0.0.0.0 can never send"),
    ({"allowed_peers": ("127.0.0.1", "255.255.255.255")}, "entry 255.255.255.255 can never"),
    ({"allowed_peers": ("239.1.1.1",)}, "allowed_peers entry 239.1.1.1 can never send"),
    ({"input_host": "239.1.1.1"}, "input_host 239.1.1.1 is multicast"),
    ({"input_port": 5005, "output_port": 5005}, "input_port 5005 is output_port on the same"),
    ({"input_port": 5005, "output_port": 5005, "input_host": "0.0.0.0"}, "is output_port"),
    ({"input_port": 5005, "output_port": 5005, "input_host": "127.0.0.2",
      "output_host": "127.0.0.2"}, "is output_port"),
    ({"input_port": 5005, "evdev_device": "/dev/input/event3"}, "one rig input at a time"),
])
def test_parameters_that_cannot_work_are_refused_in_one_line(params, words):
    with pytest.raises(ValueError) as err:
        BridgeNodeParams(**params)
    assert words in str(err.value) and "\n" not in str(err.value), err.value


def test_the_same_port_on_another_host_and_one_input_each_are_accepted():
    BridgeNodeParams(input_port=5005, output_port=5005, output_host="192.168.1.20")
    BridgeNodeParams(input_port=5005, output_port=5005, output_host="192.168.1.20",
                     input_host="0.0.0.0")  # a LAN rig on the same port number
    BridgeNodeParams(input_port=5005, allowed_peers=("127.0.0.1", "192.168.1.20"))
    BridgeNodeParams(evdev_device="/dev/input/event3")
