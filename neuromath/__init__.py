"""neuromath: train, evaluate and serve neural networks that solve mathematics problems."""

from neuromath.errors import ConfigError, DataFormatError, ExpressionError, NeuromathError

__version__ = "0.1.0"


def load(run_dir, device: str = "cpu", precision: str | None = None, **decode):
    """Load a trained run: ``neuromath.load("runs/demo").solve("Jerry had 135 pens. ...")``, an exported folder, or
    a model on the Hugging Face Hub by id, ``neuromath.load("org/name")`` or ``"org/name@revision"`` (downloaded
    into the Hugging Face cache once; needs ``pip install 'neuromath-toolkit[hub]'``);
    decoding settings may be overridden: ``neuromath.load(run, beam=10, nbest=5)``, and the precision of the
    forward passes (the run's own ``train.precision`` unless given): ``neuromath.load(run, precision="32-true")``."""
    from neuromath.api import load as load_run

    return load_run(run_dir, device, precision, **decode)


__all__ = ["ConfigError", "DataFormatError", "ExpressionError", "NeuromathError", "load", "__version__"]
