# ocal API pass (issue 14): pure identifier renames. Apply over the tree with
#   git ls-files -z -- '*.c' '*.h' '*.h.in' '*.md' '*.sh' '*.py' '*.am' '*.mk' '*.in' '*.txt' '*.supp' | xargs -0 sed -i -E -f /work/notes/s6/api_rename.sed
# Getters: ocal_<noun>_get_<property>(handle, ..., &out)
s/\bocal_buffer_dtype\b/ocal_buffer_get_dtype/g
s/\bocal_buffer_shape\b/ocal_buffer_get_shape/g
s/\bocal_buffer_numel\b/ocal_buffer_get_numel/g
s/\bocal_buffer_nbytes\b/ocal_buffer_get_nbytes/g
s/\bocal_buffer_context\b/ocal_buffer_get_context/g
s/\bocal_buffer_cl_mem\b/ocal_buffer_get_cl_mem/g
s/\bocal_event_cl_event\b/ocal_event_get_cl_event/g
s/\bocal_context_device\b/ocal_context_get_device_info/g
s/\bocal_context_has_fp64\b/ocal_context_get_fp64/g
s/\bocal_context_cache_stats\b/ocal_context_get_cache_stats/g
s/\bocal_context_cache_dir\b/ocal_context_get_cache_dir/g
s/\bocal_context_cl_context\b/ocal_context_get_cl_context/g
s/\bocal_context_cl_device\b/ocal_context_get_cl_device/g
s/\bocal_context_cl_queue\b/ocal_context_get_cl_queue/g
s/\bocal_kernel_num_args\b/ocal_kernel_get_num_args/g
s/\bocal_kernel_cl_kernel\b/ocal_kernel_get_cl_kernel/g
s/\bocal_gen_source\b/ocal_gen_get_source/g
s/\bocal_memory_stats_get\b/ocal_memory_get_stats/g
s/\bocal_fft_plan_info_get\b/ocal_fft_plan_get_info/g
s/\bocal_fft_cache_stats_get\b/ocal_fft_get_cache_stats/g
s/\bocal_fft_engine_default\b/ocal_fft_get_default_engine/g
s/\bocal_csr_shape\b/ocal_csr_get_shape/g
s/\bocal_csr_nnz\b/ocal_csr_get_nnz/g
s/\bocal_csr_dtypes\b/ocal_csr_get_dtypes/g
s/\bocal_csr_context\b/ocal_csr_get_context/g
s/\bocal_csr_spmv_kernel\b/ocal_csr_get_spmv_kernel/g
s/\bocal_mpi_context\b/ocal_mpi_get_context/g
s/\bocal_blas_tuning_info\b/ocal_blas_get_tuning/g
# Names of enum values: const char *ocal_<enum>_name(value), a static string
s/\bocal_status_string\b/ocal_status_name/g
s/\bocal_device_type_string\b/ocal_device_type_name/g
# Context and queue ordering, with the context functions
s/\bocal_finish\b/ocal_context_finish/g
s/\bocal_context_wait\b/ocal_context_enqueue_wait/g
s/\bocal_context_marker\b/ocal_context_enqueue_marker/g
