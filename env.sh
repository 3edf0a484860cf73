# Source this file for a shell with this checkout's ROS 2 environment (after `make setup`):
#     . ./env.sh        then: brainmem stats, brainmem_node --ros-args ..., python -c 'import rclpy'
# `make shell` starts such a shell. Works from bash and zsh, from any directory.
if [ -n "${BASH_SOURCE:-}" ]; then
    _brainmem_root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
elif [ -n "${ZSH_VERSION:-}" ]; then
    _brainmem_root=$(cd "$(dirname "${(%):-%x}")" && pwd)
else
    _brainmem_root=$(pwd)
fi
if [ ! -x "$_brainmem_root/.venv/bin/python" ]; then
    echo "env.sh: $_brainmem_root/.venv is missing: run make setup first" >&2
else
    export VIRTUAL_ENV="$_brainmem_root/.venv"
    export PATH="$VIRTUAL_ENV/bin:$PATH"
    export AMENT_PREFIX_PATH="$VIRTUAL_ENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
    export CMAKE_PREFIX_PATH="$VIRTUAL_ENV${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
    # Same defaults as the Makefile: this host only, unless you say otherwise.
    export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
fi
unset _brainmem_root
