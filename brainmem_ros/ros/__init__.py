"""Thin ROS 2 layer over the memory core: parameters, conversions, node, client."""
