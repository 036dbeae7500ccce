//! Rust-CUDA's `mat4_operations` compile test: a `glam::Mat4` by value
//! transforming a point and a vector, its determinant; and translation, scale
//! and axis-angle rotation matrices built from by-value vectors; results
//! stored through raw pointers. Ported from Rust-GPU/Rust-CUDA
//! `tests/compiletests/ui/glam/mat4_operations.rs` (MIT OR Apache-2.0).
use crate::gpu::*;
use glam::{Mat4, Vec3, Vec4};

#[unsafe(no_mangle)]
pub unsafe extern "C" fn mat4_transform_operations(
    matrix: Mat4,
    point: Vec3,
    vector: Vec4,
    result_point: *mut Vec3,
    result_vector: *mut Vec4,
    result_determinant: *mut f32,
) {
    // Transform a 3D point (w=1 implied)
    let transformed_point = matrix.transform_point3(point);
    *result_point = transformed_point;

    // Transform a 4D vector
    let transformed_vector = matrix * vector;
    *result_vector = transformed_vector;

    // Calculate determinant
    let det = matrix.determinant();
    *result_determinant = det;
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn mat4_construction(
    translation: Vec3,
    scale: Vec3,
    angle_radians: f32,
    axis: Vec3,
    result_translation: *mut Mat4,
    result_scale: *mut Mat4,
    result_rotation: *mut Mat4,
) {
    // Create translation matrix
    let trans_mat = Mat4::from_translation(translation);
    *result_translation = trans_mat;

    // Create scale matrix
    let scale_mat = Mat4::from_scale(scale);
    *result_scale = scale_mat;

    // Create rotation matrix
    let rot_mat = Mat4::from_axis_angle(axis, angle_radians);
    *result_rotation = rot_mat;
}
