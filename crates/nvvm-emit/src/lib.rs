//! Prints device IR as NVVM IR (the LLVM 7 typed-pointer dialect that libNVVM 2.0 accepts) and binds libNVVM at run time to verify it and compile it to PTX or LTOIR.
