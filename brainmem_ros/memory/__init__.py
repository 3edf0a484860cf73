"""ROS-free memory core."""
