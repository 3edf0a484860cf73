"""Bring up brainmem_node: long-term memory for one robot (namespace = robot)."""

import os

from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from launch import LaunchDescription


def generate_launch_description() -> LaunchDescription:
    """brainmem_node in ``namespace``, with its parameters file and data directory."""
    share = get_package_share_directory('brainmem_ros')
    namespace = LaunchConfiguration('namespace')
    params_file = LaunchConfiguration('params_file')
    data_dir = LaunchConfiguration('data_dir')
    log_level = LaunchConfiguration('log_level')
    use_sim_time = LaunchConfiguration('use_sim_time')
    autostart = LaunchConfiguration('autostart')
    use_respawn = LaunchConfiguration('use_respawn')

    return LaunchDescription([
        DeclareLaunchArgument(
            'namespace', default_value='',
            description='Namespace of the node and its services (one memory per robot)'),
        DeclareLaunchArgument(
            'params_file', default_value=os.path.join(share, 'config', 'brainmem.yaml'),
            description='Full path to the ROS 2 parameters file of brainmem_node'),
        DeclareLaunchArgument(
            'data_dir', default_value=os.path.join(os.path.expanduser('~'), '.ros', 'brainmem'),
            description='Directory of the memory store (SQLite + FAISS), created 0700'),
        DeclareLaunchArgument(
            'log_level', default_value='info', description='Log level (debug, info, warn, error)'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='false',
            description='Use the /clock topic (simulation or bag replay with --clock)'),
        DeclareLaunchArgument(
            'autostart', default_value='true',
            description='Configure and activate the node by itself; false leaves it unconfigured '
                        'for a lifecycle manager (nav2_lifecycle_manager, ros2 lifecycle set)'),
        DeclareLaunchArgument(
            'use_respawn', default_value='false',
            description='Start the node again if it exits (after 2 s); the store survives a crash'),
        Node(
            package='brainmem_ros',
            executable='brainmem_node',
            name='brainmem',
            namespace=namespace,
            output='screen',
            emulate_tty=True,
            parameters=[params_file, {'data_dir': data_dir, 'use_sim_time': use_sim_time,
                                      'autostart': ParameterValue(autostart, value_type=bool)}],
            arguments=['--ros-args', '--log-level', log_level],
            respawn=use_respawn,
            respawn_delay=2.0,
        ),
    ])
