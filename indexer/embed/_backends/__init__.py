"""The registered embedding backends, one module each (importing this package registers them all).

=============  ==========================================  ==================  ======================
name           runs the model with                         precision           pip extra
=============  ==========================================  ==================  ======================
torch          sentence-transformers on PyTorch             fp32; fp16 on CUDA  (none)
onnx           ONNX Runtime, fused BERT graph (exported)    fp32                ``onnx``
onnx-int8      ONNX Runtime, dynamically quantized weights  int8                ``onnx``
openvino       OpenVINO runtime on the exported ONNX graph  the CPU's native:   ``openvino``
                                                            bf16 with AMX,
                                                            else fp32
=============  ==========================================  ==================  ======================
"""

from indexer.embed._backends import _onnx, _openvino, _torch

__all__ = ["_onnx", "_openvino", "_torch"]
