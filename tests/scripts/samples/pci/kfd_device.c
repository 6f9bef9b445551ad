/* Excerpt of drivers/gpu/drm/amd/amdkfd/kfd_device.c (Linux), for the parser tests. */
static void kfd_device_info_init(struct kfd_dev *kfd, bool vf, uint32_t gfx_target_version)
{
	/* Navi2x+, Navi1x+: a comment outside kgd2kfd_probe is not read */
}

struct kfd_dev *kgd2kfd_probe(struct amdgpu_device *adev, bool vf)
{
	uint32_t gfx_target_version = 0;

	switch (adev->asic_type) {
	case CHIP_TONGA:
		gfx_target_version = 80002;
		break;
	case CHIP_FIJI:
	case CHIP_POLARIS10:
		gfx_target_version = 80003;
		break;
	default:
		switch (amdgpu_ip_version(adev, GC_HWIP, 0)) {
		/* Vega 10 */
		case IP_VERSION(9, 0, 1):
			gfx_target_version = 90000;
			break;
		/* Raven */
		case IP_VERSION(9, 1, 0):
		case IP_VERSION(9, 2, 2):
			gfx_target_version = 90002;
			break;
		/* as older kernels had it: the target chosen by chip revision and APU flag */
		case IP_VERSION(9, 4, 3):
			gfx_target_version = adev->rev_id >= 1 ? 90402
					   : adev->flags & AMD_IS_APU ? 90400
					   : 90401;
			break;
		/* Van Gogh */
		case IP_VERSION(10, 3, 1):
			gfx_target_version = 100303;
			break;
		/* Beige Goby */
		case IP_VERSION(10, 3, 5):
			gfx_target_version = 100304;
			break;
		case IP_VERSION(11, 0, 3):
			/* a note inside a case names no chip */
			gfx_target_version = 110001;
			break;
		case IP_VERSION(11, 5, 3):
                        gfx_target_version = 110503;
                        break;
		default:
			break;
		}
		break;
	}
	return NULL;
}

static void kfd_cwsr_init(struct kfd_dev *kfd)
{
	/* after the function: not read */
	switch (x) { case IP_VERSION(12, 0, 0): gfx_target_version = 1; break; }
}
