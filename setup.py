"""pip install of the Python package for users without ROS (core library + CLI).

On a ROS 2 machine, build with colcon instead: CMake generates the interfaces and
installs these modules into the same package.
"""

from glob import glob

from setuptools import find_packages, setup

setup(
    name='brainmem_ros',
    version='0.1.0',
    description='Long-term, brain-inspired memory for robots (ROS 2 node and Python library)',
    license='Apache-2.0',
    packages=find_packages(include=['brainmem_ros', 'brainmem_ros.*']),
    # Versioned word lists (stop words, self-vocabulary, outcome cues) read at run time.
    package_data={'brainmem_ros': ['data/*.txt', 'data/*.tsv']},
    # The bag reader's typestore reads our .msg files from share/brainmem_ros/msg.
    data_files=[('share/brainmem_ros/msg', glob('msg/*.msg'))],
    python_requires='>=3.10',
    # What brainmem_ros imports (package.xml declares the same for rosdep). The spaCy
    # pipeline is loaded by name, not imported: requirements-nlp.txt installs it by hash.
    install_requires=['numpy', 'faiss-cpu', 'onnxruntime', 'tokenizers', 'PyYAML', 'rosbags', 'mcap',
                      'zstandard', 'lz4', 'spacy>=3.8,<3.9', 'threadpoolctl', 'networkx', 'matplotlib'],
    # The LLM enrichment (encoders/llama.py) and the fleet tier (fleet/, PostgreSQL).
    extras_require={'llm': ['llama-cpp-python'], 'fleet': ['psycopg[binary]', 'psycopg-pool']},
    entry_points={'console_scripts': [
        'brainmem = brainmem_ros.cli:main',
        'brainmem_node = brainmem_ros.ros.node:main',
    ]},
)
