# The generated interfaces (msg/, srv/) and these hand-written modules are
# installed into one package; let it span both trees when both are on the path.
__path__ = __import__('pkgutil').extend_path(__path__, __name__)
