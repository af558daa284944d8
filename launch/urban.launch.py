"""ros2 launch vehicle_sim urban.launch.py [scenario:=urban] [mode:=fast] [duration:=60] ...

Starts the node graph declared in config/scenarios/<scenario>.yaml. The same declaration drives
the `vehicle_sim_run` runner on machines without launch_ros (see vehicle_sim/graph.py), so both
start the same executables with the same names, parameter files, parameters and remappings, and
the nodes that share a `process` in one vehicle_sim_compose process.
"""
import os

from launch import LaunchDescription
from launch.actions import (DeclareLaunchArgument, EmitEvent, LogInfo, OpaqueFunction,
                            SetEnvironmentVariable)
from launch.events import Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from vehicle_sim import graph
from vehicle_sim.paths import config_path
from vehicle_sim.runner import RVIZ_CONFIG, STOP_GRACE_S
from vehicle_sim.scenario_check import check_one_world


def _nodes(context):
    args = graph.resolve_args({a.name: LaunchConfiguration(a.name).perform(context)
                               for a in graph.LAUNCH_ARGS})
    scenario = graph.load_scenario(args["scenario"])
    world = check_one_world(scenario, args)  # one ego vehicle file and one map in every node
    actions = [LogInfo(msg=f"vehicle_sim scenario {args['scenario']}: {scenario.description}")]
    for process in graph.processes(scenario, args):
        on_exit = None
        if process.shutdown_on_exit and not process.respawn:
            on_exit = [EmitEvent(event=Shutdown(reason=f"{process.name} exited"))]
        life = dict(respawn=process.respawn, respawn_delay=process.respawn_delay_s,
                    on_exit=on_exit, output="screen", emulate_tty=True,
                    # SIGTERM after the runner's grace too: a node's own exit bound is below
                    # it (nodes.main), launch's default 5 s is not
                    sigterm_timeout=str(STOP_GRACE_S))
        if process.composed:  # one vehicle_sim_compose process, a section per node
            actions.append(Node(package="vehicle_sim", executable=graph.COMPOSE_EXECUTABLE,
                                exec_name=process.name,  # its log prefix (name= renames all)
                                arguments=graph.compose_arguments(process, args, scenario),
                                **life))
            continue
        spec = process.nodes[0]
        params_file = graph.params_file(spec)
        parameters = ([str(params_file)] if params_file else [])
        parameters.append(graph.node_parameters(spec, args, scenario))
        actions.append(Node(
            package="vehicle_sim", executable=spec.executable, name=spec.name,
            parameters=parameters,
            remappings=[tuple(r.split(":=", 1)) for r in spec.remappings], **life))
    if args["headless"] != "true":
        actions.append(Node(package="rviz2", executable="rviz2", name="rviz2", output="screen",
                            arguments=["-d", str(config_path(RVIZ_CONFIG))],
                            parameters=[{"use_sim_time": args["use_sim_time"] == "true"}]))
    if LaunchConfiguration("live").perform(context) == "true":  # vehicle_sim.live
        live = {"use_sim_time": args["use_sim_time"] == "true"}
        if world["ego vehicle file"] is not None:  # else the view's default ego
            live["vehicle_file"] = str(world["ego vehicle file"])
        actions.append(Node(package="vehicle_sim", executable="vehicle_sim_live", name="live_view",
                            output="screen", parameters=[live]))
    return actions


def _dds_environment(context):
    """DDS variables of the node processes (graph.dds_environment: loopback-only by default)."""
    return [SetEnvironmentVariable(name, value) for name, value in graph.dds_environment(
        LaunchConfiguration("discovery_range").perform(context), os.environ).items()]


def generate_launch_description() -> LaunchDescription:
    declared = [DeclareLaunchArgument(a.name, default_value=a.default, description=a.description,
                                      **({"choices": list(a.choices)} if a.choices else {}))
                for a in graph.LAUNCH_ARGS]
    declared.append(DeclareLaunchArgument(
        "live", default_value="false", choices=["true", "false"],
        description="also start the Foxglove WebSocket live view on ws://127.0.0.1:8765"))
    return LaunchDescription([
        *declared,
        OpaqueFunction(function=_dds_environment),
        OpaqueFunction(function=_nodes),
    ])
